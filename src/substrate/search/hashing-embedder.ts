/**
 * A deterministic, dependency-free embedder: signed feature hashing of lower-cased word unigrams,
 * word bigrams and character 3-grams, with sublinear term frequency and L2 normalisation. It captures
 * lexical and sub-word overlap (typos, inflections — there is no stemming analyzer on the local stack),
 * not meaning; it keeps kNN, filters and erasure probes testable without downloading a model.
 * Pure code: no Node built-ins, so it also runs in the workflow sandbox if ever needed.
 */
import type { Embedder } from './embedder.port.js';

/** Relative weights of the feature families; character grams are many, so each counts for less. */
const WEIGHTS = { word: 1, bigram: 0.8, char: 0.35 } as const;

const TOKEN = /[\p{L}\p{N}]+/gu;

/** Lower-cased word tokens (letters and digits of any script). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(TOKEN) ?? [];
}

/** FNV-1a over UTF-16 code units, then murmur3's finaliser so that low bits (the bucket) are well mixed. */
export function hash32(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Each feature with its weight: family weight × sublinear term frequency (1 + ln tf). */
function weightedFeatures(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  const bump = (feature: string): void => {
    counts.set(feature, (counts.get(feature) ?? 0) + 1);
  };
  const tokens = tokenize(text);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    bump(`w:${token}`);
    const next = tokens[i + 1];
    if (next !== undefined) bump(`b:${token} ${next}`);
    // Word boundaries as padding, so prefixes and suffixes are features of their own.
    const padded = ` ${token} `;
    for (let j = 0; j + 3 <= padded.length; j++) bump(`c:${padded.slice(j, j + 3)}`);
  }
  const weights = new Map<string, number>();
  for (const [feature, count] of counts) {
    const family = feature[0] === 'w' ? WEIGHTS.word : feature[0] === 'b' ? WEIGHTS.bigram : WEIGHTS.char;
    weights.set(feature, family * (1 + Math.log(count)));
  }
  return weights;
}

/** The embedding of one text: `dims` numbers, unit length, or all zeros when the text has no tokens. */
export function hashingVector(text: string, dims: number): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const [feature, weight] of weightedFeatures(text)) {
    const h = hash32(feature);
    // A second, independent hash picks the sign, so collisions cancel out on average instead of piling up.
    const sign = (hash32(feature, h ^ 0x9e3779b9) & 1) === 0 ? 1 : -1;
    const bucket = h % dims;
    vector[bucket] = vector[bucket]! + sign * weight;
  }
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (norm === 0) return vector;
  const scale = 1 / Math.sqrt(norm);
  return vector.map((x) => x * scale);
}

/** The local default embedder; `dims` comes from configuration (`LETHE_EMBEDDING_DIMS`). */
export function createHashingEmbedder(options: { dims: number }): Embedder {
  const { dims } = options;
  if (!Number.isInteger(dims) || dims < 1) throw new RangeError('dims must be a positive integer');
  return {
    dims,
    model: 'lethe-hashing-v1',
    embed(texts) {
      return Promise.resolve(texts.map((text) => hashingVector(text, dims)));
    },
  };
}
