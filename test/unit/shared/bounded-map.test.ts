import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../../src/shared/bounded-map.js';

describe('a bounded map of per-tenant state', () => {
  it('never holds more than its capacity, and forgets the least recently used first (property, against a model)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 20 }), value: fc.integer() }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 20 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 20 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 200 }), (capacity, ops) => {
        const map = new BoundedMap<number, number>(capacity);
        // The model: keys in order of use, oldest first.
        let model: [number, number][] = [];
        for (const o of ops) {
          if (o.kind === 'set') {
            map.set(o.key, o.value);
            model = [...model.filter(([k]) => k !== o.key), [o.key, o.value]];
            if (model.length > capacity) model = model.slice(model.length - capacity);
          } else if (o.kind === 'get') {
            const found = model.find(([k]) => k === o.key);
            expect(map.get(o.key)).toBe(found?.[1]);
            if (found) model = [...model.filter(([k]) => k !== o.key), found];
          } else {
            expect(map.delete(o.key)).toBe(model.some(([k]) => k === o.key));
            model = model.filter(([k]) => k !== o.key);
          }
          expect(map.size).toBeLessThanOrEqual(capacity);
          expect(map.size).toBe(model.length);
        }
        for (const [k, v] of model) expect(map.has(k) && map.get(k) === v).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
    expect(() => new BoundedMap(1.5)).toThrow(RangeError);
  });
});
