import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/shared/canonical-json.js';

describe('canonicalJson (RFC 8785)', () => {
  it('produces the RFC 8785 sample output: sorted keys, shortest numbers, minimal escapes', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('gives the same text whatever order the keys were written in', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, 2] }, b: 1 }));
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });

  it('writes negative zero as 0 and serialises a Date through toJSON', () => {
    expect(canonicalJson([-0])).toBe('[0]');
    expect(canonicalJson({ at: new Date('2025-01-01T00:00:00Z') })).toBe('{"at":"2025-01-01T00:00:00.000Z"}');
  });

  it.each([
    ['NaN', { n: Number.NaN }, '$.n'],
    ['Infinity', { list: [1, Number.POSITIVE_INFINITY] }, '$.list[1]'],
    ['undefined in an object', { a: undefined }, '$.a'],
    ['undefined in an array', [undefined], '$[0]'],
    ['undefined at the top', undefined, '$'],
    ['a bigint', { big: 1n }, '$.big'],
    ['a function', { f: () => 1 }, '$.f'],
    ['a Map', { m: new Map() }, '$.m'],
    ['a lone surrogate', { s: '\ud800' }, '$.s'],
  ])('refuses %s and names where it is', (_label, value, path) => {
    expect(() => canonicalJson(value)).toThrow(expect.objectContaining({ type: 'ValidationError', field: path }));
  });

  it('refuses a cycle instead of recursing forever', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/circular/);
  });

  it('accepts the same object twice when it is shared, not cyclic', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});
