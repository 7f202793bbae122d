/**
 * The Buffer-free base64 and hex the log's formats are read with in Node and in the page: they agree with Node's
 * Buffer on every byte string, and refuse what is not base64, not canonical base64 or not hex.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64, fromCanonicalBase64, fromHex, toBase64, toHex } from '../../../src/shared/bytes.js';

describe('bytes', () => {
  it('encodes and decodes base64 and hex as Buffer does, for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const b64 = Buffer.from(bytes).toString('base64');
        const hex = Buffer.from(bytes).toString('hex');
        expect(toBase64(bytes)).toBe(b64);
        expect(toHex(bytes)).toBe(hex);
        expect(fromBase64(b64)).toEqual(new Uint8Array(bytes));
        expect(fromCanonicalBase64(b64)).toEqual(new Uint8Array(bytes));
        expect(fromHex(hex)).toEqual(new Uint8Array(bytes));
      }),
    );
  });

  it('refuses text that is not base64, base64 that is not canonical, and text that is not hex', () => {
    expect(fromBase64('not base64!')).toBeNull();
    // "AB==" and "AA==" decode to the same byte; only the one that encoding gives back is canonical.
    expect(fromBase64('AB==')).toEqual(Uint8Array.of(0));
    expect(fromCanonicalBase64('AB==')).toBeNull();
    expect(fromHex('abc')).toBeNull();
    expect(fromHex('zz')).toBeNull();
  });
});
