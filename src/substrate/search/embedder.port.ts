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
