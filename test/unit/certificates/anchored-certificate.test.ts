/**
 * A certificate checked against its anchor with the certificate key and the log key alone: the honest one passes,
 * one changed byte anywhere (certificate, entry, proof, checkpoint) is refused naming the part, and an anchor into a
 * rewritten history passes alone but is refused against the real log's checkpoint.
 */
import { describe, expect, it } from 'vitest';
import {
  anchoredCertificate,
  verifyAnchoredCertificate,
  type AnchoredCertificate,
} from '../../../src/governance/certificates/anchored-certificate.js';
import { formatCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { auditLeaf, logAnchor } from '../../../src/governance/audit/log-tree/log-anchor.js';
import {
  consistencyProof,
  inclusionProof,
  type Hash,
  type HashGetter,
} from '../../../src/governance/audit/log-tree/merkle-tree.js';
import { noteSigner, signNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';
import { naiveRoot } from '../../support/audit-entries.js';
import {
  anchoringAuditChain,
  buildCertificateChain,
  resealAudit,
  sealAudit,
  testSigner,
} from './certificate-fixtures.js';
import { certificateAnchor } from '../../../src/governance/certificates/certificate.js';

const tenant = 't-anchor';
const signer = testSigner();
const logSigner = noteSigner(`lethe.test/audit/${tenant}`, signer);
const logKey = logSigner.verifierKey;
const certificates = buildCertificateChain(tenant, 3, signer);
const chain = anchoringAuditChain(certificates);

/** Hashes of an in-memory tree over the entries, as the stored tree answers them. */
function getter(entries: readonly AuditEntry[]): HashGetter {
  const leaves = entries.map(auditLeaf);
  return (level, index) => naiveRoot(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level));
}

function checkpointOf(entries: readonly AuditEntry[], size = entries.length): string {
  const root = naiveRoot(entries.slice(0, size).map(auditLeaf));
  return signNote(formatCheckpoint({ origin: logSigner.name, size, root }), [logSigner]);
}

const b64 = (proof: Hash[]) => proof.map((h) => Buffer.from(h).toString('base64'));

/** Certificate `i` of `certificates`, anchored in `entries` under a checkpoint of `size`. */
function anchored(entries: readonly AuditEntry[], i: number, size = entries.length): AnchoredCertificate {
  const certificate = certificates[i]!;
  const entry = entries.find((e) => e.action === 'erasure.certified' && e.target === certificate.certificateId)!;
  const proof = inclusionProof(entry.seq - 1, size, getter(entries));
  return anchoredCertificate(certificate, logAnchor(entry, checkpointOf(entries, size), proof));
}

const verify = (value: unknown, later?: { note: string; consistencyProof: string[] }) =>
  verifyAnchoredCertificate(value, { publicKeys: signer.publicKeyPem, logKey, ...(later ? { later } : {}) });

/** A copy with one character of the string at `path` changed. */
function flip(value: AnchoredCertificate, mutate: (copy: AnchoredCertificate) => void): AnchoredCertificate {
  const copy = structuredClone(value);
  mutate(copy);
  return copy;
}
const changeChar = (s: string, at: number) => `${s.slice(0, at)}${s[at] === 'A' ? 'B' : 'A'}${s.slice(at + 1)}`;

describe('a certificate against its anchor, without the chain', () => {
  it('verifies with the certificate key and the log key alone, under a checkpoint of the whole log or of a prefix', async () => {
    for (let i = 0; i < certificates.length; i++) {
      const verdict = await verify(anchored(chain, i));
      expect(verdict, `certificate ${i}`).toMatchObject({ ok: true, checkpointSize: chain.length });
    }
    const early = await verify(anchored(chain, 0, 2));
    expect(early).toMatchObject({ ok: true, auditSeq: 2, checkpointSize: 2 });
  });

  it('refuses one changed byte in the certificate, the entry, the proof or the checkpoint, naming which', async () => {
    const honest = anchored(chain, 1);
    const cases: [string, AnchoredCertificate, string, RegExp][] = [
      [
        'certificate',
        flip(honest, (c) => (c.certificate.legalGround = 'gdpr-art17-1b')),
        'certificate',
        /hash mismatch/,
      ],
      [
        'entry',
        flip(honest, (c) => (c.logAnchor.entry.at = c.logAnchor.entry.at.replace('2025', '2026'))),
        'entry',
        /entry changed/,
      ],
      ['entry index', flip(honest, (c) => (c.logAnchor.index += 1)), 'entry', /index/],
      [
        'proof',
        flip(honest, (c) => (c.logAnchor.inclusionProof[0] = changeChar(c.logAnchor.inclusionProof[0]!, 3))),
        'proof',
        /inclusion proof/,
      ],
      [
        'checkpoint',
        flip(honest, (c) => (c.logAnchor.checkpoint = c.logAnchor.checkpoint.replace(`\n${chain.length}\n`, '\n99\n'))),
        'checkpoint',
        /not signed by/,
      ],
    ];
    for (const [what, value, part, reason] of cases) {
      const verdict = await verify(value);
      expect(verdict, what).toMatchObject({ ok: false, part });
      expect(verdict.ok ? '' : verdict.reason, what).toMatch(reason);
    }
  });

  it("refuses an entry that records another certificate, and a checkpoint under another log's key", async () => {
    const honest = anchored(chain, 1);
    const swapped = { ...honest, logAnchor: anchored(chain, 2).logAnchor };
    expect(await verify(swapped)).toMatchObject({ ok: false, part: 'binding' });
    const other = noteSigner(`lethe.test/audit/${tenant}`, testSigner());
    const verdict = await verifyAnchoredCertificate(honest, {
      publicKeys: signer.publicKeyPem,
      logKey: other.verifierKey,
    });
    expect(verdict).toMatchObject({ ok: false, part: 'checkpoint' });
  });

  it('accepts a later checkpoint of the same log with its consistency proof', async () => {
    const value = anchored(chain, 0, 3);
    const proof = b64(consistencyProof(3, chain.length, getter(chain)));
    const verdict = await verify(value, { note: checkpointOf(chain), consistencyProof: proof });
    expect(verdict).toMatchObject({ ok: true, checkpointSize: 3, consistentWith: chain.length });
  });

  it("refuses an anchor into a rewritten history against the real log's checkpoint", async () => {
    // The operator drops the first entry, reseals the rest (the certificate's entry included) and signs the new
    // tree with the log's own key: alone the forked anchor checks out.
    const forked = resealAudit(tenant, [
      ...chain.slice(1, 3),
      ...sealAudit(tenant, [certificateAnchor(certificates[2]!)]),
    ]);
    const value = anchored(forked, 0);
    expect(await verify(value)).toMatchObject({ ok: true });
    // Against the checkpoint an auditor kept of the real log, no proof joins the two trees.
    for (const size of [forked.length, chain.length]) {
      const real = checkpointOf(chain, size);
      const proof = size === forked.length ? [] : b64(consistencyProof(forked.length, size, getter(chain)));
      const verdict = await verify(value, { note: real, consistencyProof: proof });
      expect(verdict, `real checkpoint of ${size}`).toMatchObject({ ok: false, part: 'consistency' });
      expect(verdict.ok ? '' : verdict.reason).toMatch(/forked/);
    }
  });

  it('refuses what is not an anchored certificate, and a malformed anchor', async () => {
    expect(await verify(certificates[0])).toMatchObject({ ok: false, part: 'anchor' });
    const honest = anchored(chain, 0);
    expect(await verify(flip(honest, (c) => (c.logAnchor.inclusionProof = ['nope'])))).toMatchObject({
      ok: false,
      part: 'anchor',
    });
  });
});
