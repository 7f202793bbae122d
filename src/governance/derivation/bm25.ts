/** Okapi BM25 over a small pool of passages, in process. Pure. */
import { contentStems } from './text-cues.js';

const K1 = 1.2;
const B = 0.75;

/**
 * Stems of passages by passage id, for one batch of audits: the batch audits many memories of one subject against
 * the same history, so each passage is tokenised once. The cache lives as long as the batch that created it, and
 * nothing process-wide keeps a passage's text or stems: a passage erased after its batch is in no memory of ours.
 */
export type StemCache = Map<string, Set<string>>;

export function createStemCache(): StemCache {
  return new Map();
}

/** A passage's content stems (which include its entities' stems), from the batch's cache when given one. */
export function stemsOf(passage: { id: string; text: string }, cache?: StemCache): Set<string> {
  let stems = cache?.get(passage.id);
  if (!stems) {
    stems = new Set(contentStems(passage.text));
    cache?.set(passage.id, stems);
  }
  return stems;
}

export interface Scored<T> {
  item: T;
  score: number;
}

/** Passages ranked by BM25 against the query, best first; passages sharing no term with it are left out. */
export function rankBm25<T extends { id: string; text: string }>(
  query: string,
  pool: readonly T[],
  cache?: StemCache,
): Scored<T>[] {
  const terms = contentStems(query);
  if (terms.length === 0 || pool.length === 0) return [];
  const docs = pool.map((item) => {
    const stems = stemsOf(item, cache); // unique stems: term frequency saturates quickly in short passages
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
