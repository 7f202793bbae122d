/** The scale test's printed figures: speed is printed for a reader to compare, never asserted. */
import { percentile, type CallRecord } from './traffic.js';
import type { PhaseReport } from './scenario.js';

const seconds = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '—');
const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
const clock = (d: Date | number) => new Date(d).toISOString().slice(11, 19);

export function memoriesPerSecond(p: PhaseReport): number {
  return p.admitTo > p.admitFrom ? p.memories / ((p.admitTo - p.admitFrom) / 1000) : Number.NaN;
}

export function erasuresPerMinute(p: PhaseReport): number {
  return p.eraseTo > p.eraseFrom ? p.erasures / ((p.eraseTo - p.eraseFrom) / 60_000) : Number.NaN;
}

/** The phases side by side, one column each, and the ratio of the last to the first where it is a rate. */
export function throughputTable(phases: PhaseReport[], retrievals: readonly CallRecord[]): string {
  const callsOf = (p: PhaseReport) =>
    retrievals.filter((c) => c.startedAt >= p.startedAt.getTime() && c.startedAt <= p.endedAt.getTime());
  const rows: [string, (p: PhaseReport) => string][] = [
    ['worker processes', (p) => String(p.workers)],
    ['time of day (UTC)', (p) => `${clock(p.startedAt)}–${clock(p.endedAt)}`],
    ['tenants / subjects', (p) => `${p.tenants} / ${p.subjects}`],
    ['memories admitted (each with its event)', (p) => String(p.memories)],
    ['admission wall time (s)', (p) => seconds(p.admitTo - p.admitFrom)],
    ['**admitted memories/s**', (p) => fixed(memoriesPerSecond(p))],
    [
      'write batch p50 / p95 (s)',
      (p) => `${seconds(percentile(p.batchMs, 50))} / ${seconds(percentile(p.batchMs, 95))}`,
    ],
    ['erasure requests completed', (p) => String(p.erasures)],
    ['first filing → last completion (s)', (p) => seconds(p.eraseTo - p.eraseFrom)],
    ['**erasures completed/min**', (p) => fixed(erasuresPerMinute(p), 2)],
    [
      'request filed → completed p50 / p95 (s)',
      (p) => `${seconds(percentile(p.requestMs, 50))} / ${seconds(percentile(p.requestMs, 95))}`,
    ],
    [
      '  filed → locate started p50 / p95 (s)',
      (p) => `${seconds(percentile(p.queuedMs, 50))} / ${seconds(percentile(p.queuedMs, 95))}`,
    ],
    ...['locate', 'closure', 'authorise', 'tombstone', 'purge', 'expunge'].map(
      (step): [string, (p: PhaseReport) => string] => [
        `  ${step} p50 / p95 (s)`,
        (p) => `${seconds(percentile(p.stepMs[step] ?? [], 50))} / ${seconds(percentile(p.stepMs[step] ?? [], 95))}`,
      ],
    ),
    [
      '  compaction: expunge done → verify started p50 / p95 (s)',
      (p) => `${seconds(percentile(p.compactMs, 50))} / ${seconds(percentile(p.compactMs, 95))}`,
    ],
    [
      '  verify p50 / p95 (s)',
      (p) =>
        `${seconds(percentile(p.stepMs['verify'] ?? [], 50))} / ${seconds(percentile(p.stepMs['verify'] ?? [], 95))}`,
    ],
    ['retrieval calls (answered 2xx)', (p) => `${callsOf(p).length} (${callsOf(p).filter((c) => ok(c)).length})`],
    [
      'retrieval p50 / p95 (ms)',
      (p) => {
        const ms = callsOf(p)
          .filter((c) => ok(c))
          .map((c) => c.endedAt - c.startedAt);
        return `${fixed(percentile(ms, 50), 0)} / ${fixed(percentile(ms, 95), 0)}`;
      },
    ],
    [
      'load average (1 min) mean / max',
      (p) => `${fixed(p.loads.reduce((a, b) => a + b, 0) / p.loads.length, 2)} / ${fixed(Math.max(...p.loads), 2)}`,
    ],
  ];
  const header = ['', ...phases.map((p) => p.name)];
  const body = rows.map(([label, cell]) => [label, ...phases.map(cell)]);
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const out = [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)];
  if (phases.length >= 2) {
    const first = phases[0]!;
    const last = phases[phases.length - 1]!;
    out.push(
      '',
      `${last.name} ÷ ${first.name}: admitted memories/s ${fixed(memoriesPerSecond(last) / memoriesPerSecond(first), 2)}×, ` +
        `erasures/min ${fixed(erasuresPerMinute(last) / erasuresPerMinute(first), 2)}×`,
    );
  }
  return out.join('\n');
}

const ok = (c: CallRecord) => c.status !== null && c.status >= 200 && c.status < 300;
