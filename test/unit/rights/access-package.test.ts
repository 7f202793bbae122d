import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSigner } from '../../../src/governance/certificates/signing.js';
import {
  signAccessPackage,
  verifyAccessPackage,
  type AccessPackageBody,
} from '../../../src/governance/rights/access-request.js';
import { pieces } from '../../../src/governance/rights/access-store.js';

const keys = () => generateKeyPairSync('ed25519');

function body(content: string): AccessPackageBody {
  return {
    kind: 'lethe.access-package',
    version: 1,
    tenant: 'acme',
    requestId: 'acc_1',
    issuedAt: '2026-12-04T00:00:00.000Z',
    selectorKind: 'subjectId',
    records: [
      {
        id: 'mem_1',
        type: 'memory',
        reach: 'located',
        namespace: 'crm',
        subjects: ['s'],
        content,
        purpose: 'support',
        sensitivity: 'internal',
        retentionClass: 'standard',
        expiresAt: null,
        source: 'written by a',
        provenance: { eventIds: ['evt_1'], parentIds: [], derivationRule: 'r' },
        status: 'active',
        validFrom: null,
        validTo: null,
        recordedAt: '2026-12-04T00:00:00.000Z',
      },
    ],
    disputes: [],
    holds: { records: 0, active: 0 },
    erasures: [],
    recipients: [],
    counts: { memories: 1 },
  };
}

describe('an access package', () => {
  it('verifies under its key, and not under another, nor after any change of its body', () => {
    const { privateKey, publicKey } = keys();
    const signed = signAccessPackage(body('Ana prefers e-mail.'), createSigner(privateKey));
    expect(verifyAccessPackage(signed, [publicKey])).toEqual({ ok: true, keyId: signed.signature.keyId, records: 1 });
    expect(verifyAccessPackage(signed, [keys().publicKey]).ok).toBe(false);
    const changed = { ...signed, records: [{ ...signed.records[0]!, content: 'Ana prefers post.' }] };
    expect(verifyAccessPackage(changed, [publicKey])).toMatchObject({
      ok: false,
      reason: expect.stringContaining('changed'),
    });
    expect(verifyAccessPackage({ ...signed, recipients: [{ recordId: 'x' }] }, [publicKey]).ok).toBe(false);
    const { signature: _s, ...unsigned } = signed;
    expect(verifyAccessPackage(unsigned, [publicKey])).toMatchObject({
      ok: false,
      reason: expect.stringContaining('unsigned'),
    });
    expect(verifyAccessPackage({ kind: 'other' }, [publicKey]).ok).toBe(false);
  });

  it('is stored in pieces that join back to the same text and never split a character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 1, max: 50 }), (text, size) => {
        const parts = pieces(text, size);
        expect(parts.join('')).toBe(text);
        for (const part of parts) {
          // A piece is longer than asked only to keep a pair whole, when one character is all it would hold.
          expect(part.length).toBeLessThanOrEqual(Math.max(size, 2));
          // Each piece is valid UTF-16 on its own: it survives encoding to UTF-8 and back.
          if (size > 1) expect(Buffer.from(part, 'utf8').toString('utf8')).toBe(part);
        }
      }),
    );
  });
});
