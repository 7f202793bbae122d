import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTilePath, sizeHolding, tilePath } from '../../../src/governance/audit/log-tree/tile-path.js';

describe('tile paths as C2SP tlog-tiles writes them', () => {
  it('writes the examples the spec gives', () => {
    expect(tilePath({ level: 0, index: 1234067, width: 256 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: 1, index: 5, width: 8 })).toBe('tile/1/005.p/8');
    expect(tilePath({ level: -1, index: 1000, width: 256 })).toBe('tile/entries/x001/000');
    expect(tilePath({ level: 0, index: 0, width: 1 })).toBe('tile/0/000.p/1');
  });

  it('reads back every path it writes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1, max: 63 }),
        fc.maxSafeNat(),
        fc.integer({ min: 1, max: 256 }),
        (level, index, width) => {
          const tile = { level, index, width };
          expect(parseTilePath(tilePath(tile))).toEqual({ ok: true, tile });
        },
      ),
    );
  });

  it.each([
    ['tile/0/5', 'index must be three-digit groups'],
    ['tile/0/x005', 'index must be three-digit groups'],
    ['tile/0/001/234', 'index must be three-digit groups'],
    ['tile/0/x000/005', 'leading zero group'],
    ['tile/00/005', 'level "00"'],
    ['tile/64/005', 'level "64"'],
    ['tile/data/005', 'level "data"'],
    ['tile/0/005.p/256', 'width "256"'],
    ['tile/0/005.p/0', 'width "0"'],
    ['tile/0/005.p/07', 'width "07"'],
    ['tile/0/005.p/', 'width ""'],
    ['tile/0', 'not a tile'],
    ['tiles/0/005', 'not a tile'],
    ['tile/\u0000/005', 'level "?"'],
    ['tile/0/x009/x007/x199/x254/x740/993', 'too large'],
  ])('refuses %j, saying why', (path, reason) => {
    const verdict = parseTilePath(path);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.reason).toContain(reason);
  });

  it('names the tree size from which a tile is whole and final', () => {
    expect(sizeHolding({ level: -1, index: 0, width: 3 })).toBe(3);
    expect(sizeHolding({ level: 0, index: 2, width: 256 })).toBe(768);
    expect(sizeHolding({ level: 1, index: 0, width: 2 })).toBe(512);
    expect(sizeHolding({ level: 2, index: 1, width: 1 })).toBe(257 * 65536);
  });
});
