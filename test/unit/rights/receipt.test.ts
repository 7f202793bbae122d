import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSigner } from '../../../src/governance/certificates/signing.js';
import { issueReceipt, verifyReceipt } from '../../../src/governance/rights/receipt.js';

const pair = generateKeyPairSync('ed25519');
const signer = createSigner(pair.privateKey);
const anchor = { seq: 42, hash: 'a'.repeat(64), action: 'rectification.applied' };
const receipt = issueReceipt(
  {
    tenant: 'acme',
    right: 'rectification',
    requestId: 'rec_1',
    state: 'applied',
    requester: 'dora',
    receivedAt: '2026-12-04T00:00:00.000Z',
    dueAt: '2027-01-04T00:00:00.000Z',
    closedAt: '2026-12-04T01:00:00.000Z',
    outcome: { memoryId: 'mem_1', correctedId: 'mem_rec_1', derivedStale: 3 },
  },
  anchor,
  signer,
);
const entry = { tenant: 'acme', seq: 42, hash: 'a'.repeat(64), action: 'rectification.applied', target: 'rec_1' };

describe('a rights receipt', () => {
  it('verifies under its key, and with an audit export holding its anchor', () => {
    expect(verifyReceipt(receipt, [pair.publicKey])).toEqual({ ok: true, keyId: signer.keyId });
    expect(verifyReceipt(receipt, [pair.publicKey], [entry]).ok).toBe(true);
  });

  it('fails under another key, when any field is changed, and when its anchor is missing or different', () => {
    expect(verifyReceipt(receipt, [generateKeyPairSync('ed25519').publicKey]).ok).toBe(false);
    fc.assert(
      fc.property(fc.constantFrom('state', 'requester', 'closedAt', 'tenant'), fc.string(), (field, value) => {
        fc.pre(value !== (receipt as unknown as Record<string, unknown>)[field]);
        expect(verifyReceipt({ ...receipt, [field]: value }, [pair.publicKey]).ok).toBe(false);
      }),
    );
    expect(verifyReceipt(receipt, [pair.publicKey], []).ok).toBe(false);
    expect(verifyReceipt(receipt, [pair.publicKey], [{ ...entry, hash: 'b'.repeat(64) }]).ok).toBe(false);
    expect(verifyReceipt(receipt, [pair.publicKey], [{ ...entry, target: 'rec_2' }]).ok).toBe(false);
    expect(verifyReceipt(receipt, [pair.publicKey], [{ ...entry, tenant: 'other' }]).ok).toBe(false);
    expect(verifyReceipt({ ...receipt, kind: 'lethe.access-package' }, [pair.publicKey]).ok).toBe(false);
  });
});
