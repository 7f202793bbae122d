/**
 * Turns texts into dense vectors for the kNN half of hybrid search. The local default is
 * `hashing-embedder.ts` (no model download); an external model service plugs in behind this port.
 */
export interface Embedder {
  /** Length of every vector `embed` returns; the index mapping is created with it. */
  readonly dims: number;
  /** Identifies the model and its version, recorded as provenance next to what it embedded. */
  readonly model: string;
  /**
   * One vector per input text, in order. A text with no features (empty, whitespace, punctuation only)
   * yields the zero vector: callers must not index or query with it (cosine is undefined there).
   */
  embed(texts: string[]): Promise<number[][]>;
}

/** True when a vector carries no direction (all zeros), e.g. the embedding of an empty text. */
export function isZeroVector(vector: readonly number[]): boolean {
  return vector.every((x) => x === 0);
}

/**
 * One vector per text, checked against the embedder's own promise, or null where the text has no direction:
 * cosine is undefined for the zero vector (Elasticsearch refuses it), so such a document is found by BM25 only.
 */
export async function vectorsOrNull(embedder: Embedder, texts: string[]): Promise<(number[] | null)[]> {
  const vectors = await embedder.embed(texts);
  if (vectors.length !== texts.length) throw new Error('embedder returned a wrong number of vectors');
  return vectors.map((v) => {
    if (v.length !== embedder.dims) throw new Error('embedder returned a vector of the wrong length');
    return isZeroVector(v) ? null : v;
  });
}
