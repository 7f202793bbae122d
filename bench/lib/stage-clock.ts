/**
 * Where a call's time goes: wraps the ports a service is built over so that every async method call adds its wall
 * time to a named stage. The stages of one route are summed over a run and printed per call beside the total.
 * Nested calls (an embedder called inside the index's search) count in both stages; the report says which nest.
 */
export class StageClock {
  readonly totals = new Map<string, { ms: number; calls: number }>();
  private on = false;

  /** Only calls made between `start()` and `stop()` are counted (warm-up and other routes are not). */
  start(): void {
    this.on = true;
  }
  stop(): void {
    this.on = false;
  }

  /** `target` with each function property timed as `stage` (the object is not changed). */
  wrap<T extends object>(target: T, stage: string): T {
    return new Proxy(target, {
      get: (obj, key, receiver) => {
        const value: unknown = Reflect.get(obj, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (!this.on) return (value as (...a: unknown[]) => unknown).apply(obj, args);
          const started = performance.now();
          const result = (value as (...a: unknown[]) => unknown).apply(obj, args);
          const add = () => this.add(stage, performance.now() - started);
          if (result instanceof Promise) return result.finally(add);
          add();
          return result;
        };
      },
    });
  }

  add(stage: string, ms: number): void {
    const total = this.totals.get(stage) ?? { ms: 0, calls: 0 };
    total.ms += ms;
    total.calls++;
    this.totals.set(stage, total);
  }
}
