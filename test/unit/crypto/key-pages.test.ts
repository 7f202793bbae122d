import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutIntoPages, PAGE_ID_BYTES } from '../../../src/substrate/crypto/key-pages.js';

const bytesOf = (page: string[]) => page.reduce((n, id) => n + Buffer.byteLength(id) + 8, 0);

describe('record ids cut into key pages', () => {
  it('keeps every id once, in order, each page within the byte bound unless one id alone exceeds it', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 300, unit: 'binary' }), { maxLength: 400 }), (ids) => {
        const pages = cutIntoPages(ids);
        expect(pages.flat()).toEqual(ids);
        for (const page of pages) {
          expect(page.length).toBeGreaterThan(0);
          if (page.length > 1) expect(bytesOf(page)).toBeLessThanOrEqual(PAGE_ID_BYTES);
        }
        // Greedy: no page could have taken the next page's first id.
        for (let i = 0; i + 1 < pages.length; i++)
          expect(bytesOf([...pages[i]!, pages[i + 1]![0]!])).toBeGreaterThan(PAGE_ID_BYTES);
      }),
      { numRuns: 200 },
    );
  });

  it('puts 46 memories with 36-character ids in a page, and ids of 256 four-byte characters one to a page', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `mem_${i.toString(16).padStart(32, '0')}`);
    expect(cutIntoPages(ids)[0]).toHaveLength(46);
    const long = '😀'.repeat(256);
    expect(cutIntoPages([long, `${long}!`])).toEqual([[long], [`${long}!`]]);
  });
});
