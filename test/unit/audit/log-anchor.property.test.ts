/**
 * Properties of a log anchor over trees of every shape up to 70 entries: the honest anchor of any entry under any
 * checkpoint that holds it verifies; one bit flipped anywhere in its proof, or a checkpoint that does not reach it,
 * is refused naming the part.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { auditLeaf, logAnchor, verifyLogAnchor } from '../../../src/governance/audit/log-tree/log-anchor.js';
import { inclusionProof } from '../../../src/governance/audit/log-tree/merkle-tree.js';
import { noteSigner, signNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import { auditEntries, naiveRoot } from '../../support/audit-entries.js';
import { sealAudit, testSigner } from '../certificates/certificate-fixtures.js';

const tenant = 't-prop';
const log = noteSigner(`lethe.test/audit/${tenant}`, testSigner());
const entries = sealAudit(tenant, auditEntries(tenant, 70));
const leaves = entries.map(auditLeaf);
const get = (level: number, index: number) => naiveRoot(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level));
const checkpoint = (size: number) =>
  signNote(formatCheckpoint({ origin: log.name, size, root: naiveRoot(leaves.slice(0, size)) }), [log]);
const check = { logKey: log.verifierKey, binds: () => null };

/** A size, an index below it, and a position for a flipped bit. */
const shape = fc
  .integer({ min: 1, max: entries.length })
  .chain((size) => fc.tuple(fc.constant(size), fc.integer({ min: 0, max: size - 1 }), fc.nat(), fc.nat({ max: 255 })));

describe('log anchors', () => {
  it('verify for every entry under every checkpoint that holds it, and refuse a flipped proof bit', async () => {
    await fc.assert(
      fc.asyncProperty(shape, async ([size, index, at, bit]) => {
        const proof = inclusionProof(index, size, get);
        const anchor = logAnchor(entries[index]!, checkpoint(size), proof);
        expect(await verifyLogAnchor(anchor, check)).toMatchObject({ ok: true, index, size });
        if (proof.length === 0) return;
        const flipped = proof.map((h) => Uint8Array.from(h));
        const hash = flipped[at % flipped.length]!;
        hash[(bit >> 3) % 32]! ^= 1 << (bit & 7);
        const verdict = await verifyLogAnchor(logAnchor(entries[index]!, checkpoint(size), flipped), check);
        expect(verdict).toMatchObject({ ok: false, part: 'proof' });
      }),
      { numRuns: 200 },
    );
  });

  it('refuse a checkpoint that does not reach the entry', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: entries.length - 1 }), async (size) => {
        const anchor = logAnchor(entries[size]!, checkpoint(size), []);
        expect(await verifyLogAnchor(anchor, check)).toMatchObject({ ok: false, part: 'checkpoint' });
      }),
      { numRuns: 30 },
    );
  });
});
