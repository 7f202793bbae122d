/** Small statistics and plain-text/markdown table helpers for `bench/stack.bench.ts`. */
import os from 'node:os';

/** The 1, 5 and 15 minute load averages, as a bench prints them beside its figures: "3.4 2.9 2.1". */
export const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** The p-th percentile (0–100) of `values`, nearest-rank on a sorted copy. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

/** 3 significant-ish figures: 1234 → "1234", 56.78 → "56.8", 1.234 → "1.23", 0.0456 → "0.046". */
export function num(x: number): string {
  if (!Number.isFinite(x)) return 'n/a';
  const a = Math.abs(x);
  if (a >= 100) return String(Math.round(x));
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

/** A ratio as "4.2×". */
export function ratio(x: number): string {
  if (!Number.isFinite(x)) return 'n/a';
  return `${x >= 10 ? x.toFixed(0) : x.toFixed(x >= 1 ? 1 : 2)}×`;
}

/** Rows of cells; the first column is left-aligned, the others right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('   ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('   ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** The same rows as a GitHub markdown table (numbers right-aligned). */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  const align = header.map((_, c) => (c < 2 ? '---' : '---:'));
  return [line(header), line(align), ...rows.map(line)].join('\n');
}
