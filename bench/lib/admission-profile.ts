/**
 * Where an activity's time goes, port by port: the ports an activity factory receives are wrapped so that every
 * method call made inside an activity (by Temporal's activity context) is kept as an interval, by activity type and
 * workflow.
 * Calls overlap (admission reads and writes many records at once), so each method is reported twice: its calls'
 * summed time, and its wall time (the union of its intervals, what the activity waited on it at least once). Nested
 * ports (`fences.admissions`) are wrapped too; a call that calls another port counts in both.
 */
import { Context } from '@temporalio/activity';

type Interval = readonly [number, number];

/** `activity type \u0000 workflow id` of the running activity, or null outside one. */
function currentActivity(): string | null {
  try {
    const info = Context.current().info;
    return `${info.activityType}\u0000${info.workflowExecution?.workflowId ?? '-'}`;
  } catch {
    return null;
  }
}

/** Total length of the union of `intervals`. */
export function unionMs(intervals: readonly Interval[]): number {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let start = -Infinity;
  let end = -Infinity;
  for (const [s, e] of sorted) {
    if (s > end) {
      if (end > start) total += end - start;
      start = s;
      end = e;
    } else if (e > end) end = e;
  }
  if (end > start) total += end - start;
  return total;
}

export interface PortRow {
  /** `port.method`. */
  name: string;
  /** Calls per workflow, on average. */
  calls: number;
  /** Wall time per workflow: the union of the method's intervals (ms). */
  wallMs: number;
  /** Summed call time per workflow (ms). */
  summedMs: number;
}

export class AdmissionProfile {
  /** `activity type \u0000 workflow id` → `port.method` → intervals. */
  private readonly spans = new Map<string, Map<string, Interval[]>>();
  private readonly proxies = new WeakMap<object, object>();
  private on = false;

  /** Only calls made between `start()` and `stop()` are kept (a warm-up batch is not). */
  start(): void {
    this.on = true;
  }
  stop(): void {
    this.on = false;
  }

  /** `target` with each method timed as `port.method` (the object is not changed); nested ports are wrapped too. */
  wrap<T extends object>(target: T, port: string): T {
    const known = this.proxies.get(target);
    if (known) return known as T;
    const proxy = new Proxy(target, {
      get: (obj, key, receiver) => {
        const value: unknown = Reflect.get(obj, key, receiver);
        const name = `${port}.${String(key)}`;
        if (value !== null && typeof value === 'object' && !Array.isArray(value) && hasMethods(value))
          return this.wrap(value, name);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const workflow = this.on ? currentActivity() : null;
          const call = () => (value as (...a: unknown[]) => unknown).apply(obj, args);
          if (workflow === null) return call();
          const started = performance.now();
          const keep = () => this.keep(workflow, name, [started, performance.now()]);
          const result = call();
          if (result instanceof Promise) return result.finally(keep);
          keep();
          return result;
        };
      },
    });
    this.proxies.set(target, proxy);
    return proxy;
  }

  private keep(workflow: string, name: string, interval: Interval): void {
    const byName = this.spans.get(workflow) ?? new Map<string, Interval[]>();
    this.spans.set(workflow, byName);
    const list = byName.get(name) ?? [];
    list.push(interval);
    byName.set(name, list);
  }

  /** The runs of activity `type` seen: each workflow's calls (its attempts together). */
  private runs(type: string): Map<string, Interval[]>[] {
    return [...this.spans.entries()].filter(([k]) => k.startsWith(`${type}\u0000`)).map(([, v]) => v);
  }

  /** Per method called inside activity `type`, averaged over the workflows that ran it, largest wall time first. */
  rows(type: string): PortRow[] {
    const runs = this.runs(type);
    const names = new Set(runs.flatMap((m) => [...m.keys()]));
    return [...names]
      .map((name) => {
        let calls = 0;
        let wallMs = 0;
        let summedMs = 0;
        for (const byName of runs) {
          const list = byName.get(name) ?? [];
          calls += list.length;
          wallMs += unionMs(list);
          summedMs += list.reduce((n, [s, e]) => n + e - s, 0);
        }
        const n = runs.length;
        return { name, calls: calls / n, wallMs: wallMs / n, summedMs: summedMs / n };
      })
      .sort((a, b) => b.wallMs - a.wallMs);
  }

  /** Wall time per workflow during which activity `type` had a call to any wrapped port in flight (ms). */
  anyPortMs(type: string): number {
    const runs = this.runs(type);
    const total = runs.reduce((n, byName) => n + unionMs([...byName.values()].flat()), 0);
    return runs.length > 0 ? total / runs.length : NaN;
  }
}

function hasMethods(value: object): boolean {
  if (value instanceof Date || value instanceof Map || value instanceof Set || ArrayBuffer.isView(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  const keys = [
    ...Object.keys(value),
    ...(proto && proto !== Object.prototype ? Object.getOwnPropertyNames(proto) : []),
  ];
  return keys.some((key) => key !== 'constructor' && typeof (value as Record<string, unknown>)[key] === 'function');
}
