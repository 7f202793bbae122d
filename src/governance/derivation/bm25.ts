/** Okapi BM25 over a small pool of passages, in process. Pure. */
import { contentStems } from './text-cues.js';

const K1 = 1.2;
/** Passages tokenised recently: a batch audits many memories of one subject against the same history. */
const STEMS_CACHE_LIMIT = 20_000;
const stemsCache = new Map<string, Set<string>>();

/** A passage's content stems (which include its entities' stems), cached. */
export function stemsOf(text: string): Set<string> {
  let stems = stemsCache.get(text);
  if (!stems) {
    if (stemsCache.size >= STEMS_CACHE_LIMIT) stemsCache.clear();
    stems = new Set(contentStems(text));
    stemsCache.set(text, stems);
  }
  return stems;
}
const B = 0.75;

export interface Scored<T> {
  item: T;
  score: number;
}

/** Pool items ranked by BM25 against the query, best first; items sharing no term with it are left out. */
export function rankBm25<T>(query: string, pool: readonly T[], textOf: (item: T) => string): Scored<T>[] {
  const terms = contentStems(query);
  if (terms.length === 0 || pool.length === 0) return [];
  const docs = pool.map((item) => {
    const stems = stemsOf(textOf(item)); // unique stems: term frequency saturates quickly in short passages
    return { item, stems, length: stems.size };
  });
  const avg = docs.reduce((n, d) => n + d.length, 0) / docs.length || 1;
  const df = new Map(terms.map((t) => [t, docs.filter((d) => d.stems.has(t)).length]));
  const scored = docs.map((d) => {
    let score = 0;
    for (const t of terms) {
      if (!d.stems.has(t)) continue;
      const n = df.get(t)!;
      const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
      score += (idf * (K1 + 1)) / (1 + K1 * (1 - B + (B * d.length) / avg));
    }
    return { item: d.item, score };
  });
  // Ties keep pool order, so the ranking is deterministic.
  return scored.filter((s) => s.score > 0).sort((x, y) => y.score - x.score);
}
