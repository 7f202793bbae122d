/** Timing, statistics and deterministic text for the substrate benchmark. */

export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** Items per second. */
export function rate(count: number, ms: number): number {
  return (count / ms) * 1000;
}

/** A small deterministic PRNG (mulberry32), so that runs are comparable. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOCABULARY = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}x`);

/** Words with a Zipf-like spread (low ids frequent, as in natural text): BM25 has work to do. */
export function sentenceMaker(random: () => number): (words: number) => string {
  const word = (): string => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)]!;
  return (words) => Array.from({ length: words }, word).join(' ');
}

export const fmt = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
