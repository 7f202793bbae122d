import { describe, expect, it } from 'vitest';
import {
  createHashingEmbedder,
  hash32,
  hashingVector,
  tokenize,
} from '../../../src/substrate/search/hashing-embedder.js';
import { isZeroVector } from '../../../src/substrate/search/embedder.port.js';

const dot = (a: number[], b: number[]): number => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);
const norm = (a: number[]): number => Math.sqrt(dot(a, a));

describe('hashing embedder', () => {
  const embedder = createHashingEmbedder({ dims: 256 });

  it('gives the same vector for the same text, across instances', async () => {
    const [a] = await embedder.embed(['Alice moved to Lisbon in 2023']);
    const [b] = await createHashingEmbedder({ dims: 256 }).embed(['Alice moved to Lisbon in 2023']);
    expect(a).toEqual(b);
  });

  it('returns one unit-length vector of the configured size per text', async () => {
    for (const dims of [8, 64, 256, 1024]) {
      const vectors = await createHashingEmbedder({ dims }).embed(['one', 'two words', 'a longer sentence here']);
      expect(vectors).toHaveLength(3);
      for (const v of vectors) {
        expect(v).toHaveLength(dims);
        expect(norm(v)).toBeCloseTo(1, 10);
      }
    }
  });

  it('ranks a paraphrase closer than an unrelated text', async () => {
    const [query, similar, unrelated] = await embedder.embed([
      'The customer prefers email contact in the morning',
      'customer prefers to be contacted by email in mornings',
      'Quarterly revenue grew by twelve percent in Germany',
    ]);
    expect(dot(query!, similar!)).toBeGreaterThan(dot(query!, unrelated!) + 0.2);
  });

  it('is case-insensitive and tolerant of small spelling changes', () => {
    const a = hashingVector('Contract renewal', 128);
    expect(hashingVector('CONTRACT RENEWAL', 128)).toEqual(a);
    expect(dot(a, hashingVector('contracts renewals', 128))).toBeGreaterThan(0.4);
  });

  it('maps empty, whitespace and punctuation-only text to the zero vector', async () => {
    const vectors = await embedder.embed(['', '   \n\t', '?!… --']);
    for (const v of vectors) {
      expect(v).toHaveLength(256);
      expect(isZeroVector(v)).toBe(true);
    }
  });

  it('handles an empty batch and refuses invalid dims', async () => {
    expect(await embedder.embed([])).toEqual([]);
    expect(() => createHashingEmbedder({ dims: 0 })).toThrow(RangeError);
    expect(() => createHashingEmbedder({ dims: 1.5 })).toThrow(RangeError);
  });

  it('tokenizes letters and digits of any script, lower-cased', () => {
    expect(tokenize('Zoë paid €40 to Müller-Lüdenscheidt; 東京!')).toEqual([
      'zoë',
      'paid',
      '40',
      'to',
      'müller',
      'lüdenscheidt',
      '東京',
    ]);
  });

  it('hashes to unsigned 32-bit values that depend on the seed', () => {
    expect(hash32('abc')).toBe(hash32('abc'));
    expect(hash32('abc')).not.toBe(hash32('abd'));
    expect(hash32('abc', 1)).not.toBe(hash32('abc', 2));
    expect(hash32('abc')).toBeGreaterThanOrEqual(0);
    expect(hash32('abc')).toBeLessThan(2 ** 32);
  });
});
