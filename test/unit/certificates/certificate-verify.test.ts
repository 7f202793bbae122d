import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { verifyAuditJsonl } from '../../../src/governance/audit/audit-export.js';
import {
  certificateAnchor,
  certificateBody,
  hashCertificate,
  sealCertificate,
  type CertificateBody,
  type DeletionCertificate,
} from '../../../src/governance/certificates/certificate.js';
import {
  createAnchorReader,
  verifyCertificatesJsonl,
  verifyCertificatesJsonlStream,
} from '../../../src/governance/certificates/certificate-verify.js';
import { anchoringAuditChain, buildCertificateChain, jsonl, sealAudit, testSigner } from './certificate-fixtures.js';

const tenant = 't-verify';
const signer = testSigner();
const chain = buildCertificateChain(tenant, 6, signer);
const lines = jsonl(chain);
const audit = jsonl(anchoringAuditChain(chain));
const publicKeys = signer.publicKeyPem;

function withLine(index: number, change: (c: Record<string, unknown>) => void): string[] {
  const copy = [...lines];
  const certificate = JSON.parse(copy[index]!) as Record<string, unknown>;
  change(certificate);
  copy[index] = canonicalJson(certificate);
  return copy;
}

describe('offline verification of a certificate export', () => {
  it('an honest export verifies, with its anchors in the audit export', () => {
    expect(
      verifyCertificatesJsonl({ certificates: lines.join('\n'), audit: audit.join('\n') }, { publicKeys }),
    ).toEqual({
      ok: true,
      tenant,
      count: 6,
      firstSeq: 1,
      lastSeq: 6,
      headHash: chain[5]!.hash,
      keyIds: [signer.keyId],
      anchored: 6,
      auditEntries: 13,
    });
    expect(verifyCertificatesJsonl({ certificates: lines }, { publicKeys })).toMatchObject({
      ok: true,
      count: 6,
      anchored: null,
    });
  });

  it('a changed field is named at that certificate as a hash mismatch', () => {
    const tampered = withLine(2, (c) => {
      (c.closure as { collateral: number }).collateral += 1;
    });
    expect(verifyCertificatesJsonl({ certificates: tampered }, { publicKeys })).toEqual({
      ok: false,
      firstBad: {
        source: 'certificates',
        line: 3,
        certificateId: chain[2]!.certificateId,
        seq: 3,
        reason: 'hash mismatch: the certificate was changed after it was sealed',
      },
    });
  });

  it('a changed field with a recomputed hash is named as an invalid signature', () => {
    const tampered = withLine(3, (c) => {
      c.legalGround = 'correction';
      c.hash = hashCertificate(c as unknown as DeletionCertificate);
    });
    expect(verifyCertificatesJsonl({ certificates: tampered }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: {
        line: 4,
        seq: 4,
        reason: `signature invalid: the Ed25519 signature does not verify with key ${signer.keyId}`,
      },
    });
  });

  it('a certificate re-signed by another key under the honest keyId fails its signature', () => {
    const forger = testSigner();
    const tampered = withLine(1, (c) => {
      const forged = sealCertificate(
        {
          ...(certificateBody(c as unknown as DeletionCertificate) as unknown as CertificateBody),
          requester: 'mallory',
        },
        forger,
      );
      Object.assign(c, forged, { keyId: signer.keyId });
    });
    expect(verifyCertificatesJsonl({ certificates: tampered }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 2, seq: 2, reason: expect.stringMatching(/^signature invalid:/) },
    });
  });

  it('verifying with the wrong public key rejects the first certificate as signed by an unknown key', () => {
    const other = testSigner();
    expect(verifyCertificatesJsonl({ certificates: lines }, { publicKeys: other.publicKeyPem })).toEqual({
      ok: false,
      firstBad: {
        source: 'certificates',
        line: 1,
        certificateId: chain[0]!.certificateId,
        seq: 1,
        reason: `unknown key: signed with key ${signer.keyId}, which is not among the given public keys`,
      },
    });
  });

  it('certificates signed before a key rotation verify when both public keys are given', () => {
    const next = testSigner();
    const later = buildCertificateChain(tenant, 3, next, {
      fromSeq: 7,
      prevHash: chain[5]!.hash,
      start: new Date(Date.UTC(2025, 3, 1)),
    });
    const rotated = [...lines, ...jsonl(later)];
    expect(
      verifyCertificatesJsonl({ certificates: rotated }, { publicKeys: [publicKeys, next.publicKeyPem] }),
    ).toMatchObject({
      ok: true,
      count: 9,
      keyIds: [signer.keyId, next.keyId],
    });
    expect(verifyCertificatesJsonl({ certificates: rotated }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 7, reason: expect.stringMatching(/^unknown key:/) },
    });
  });

  it('a removed certificate is named at its successor as a seq gap', () => {
    const removed = lines.filter((_, i) => i !== 2);
    expect(verifyCertificatesJsonl({ certificates: removed }, { publicKeys })).toEqual({
      ok: false,
      firstBad: {
        source: 'certificates',
        line: 3,
        certificateId: chain[3]!.certificateId,
        seq: 4,
        reason: 'seq gap: expected seq 3, found 4 (certificates missing or reordered)',
      },
    });
  });

  it('a removed first certificate is caught: without a declared period the export must start at seq 1', () => {
    expect(verifyCertificatesJsonl({ certificates: lines.slice(1) }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 1, seq: 2, reason: 'seq gap: expected seq 1, found 2 (certificates missing or reordered)' },
    });
  });

  it('a removed last certificate is caught by the audit export when the period end is declared', () => {
    const to = new Date(chain[5]!.issuedAt);
    expect(verifyCertificatesJsonl({ certificates: lines.slice(0, 5), audit }, { publicKeys, to })).toEqual({
      ok: false,
      firstBad: {
        source: 'certificates',
        line: 6,
        certificateId: chain[5]!.certificateId,
        seq: 6,
        reason:
          'missing certificate: seq 6 is anchored at audit seq 12 as issued within the period but is not in the export',
      },
    });
  });

  it('reordered certificates are named at the first one out of place', () => {
    const swapped = [...lines];
    [swapped[1], swapped[4]] = [swapped[4]!, swapped[1]!];
    expect(verifyCertificatesJsonl({ certificates: swapped }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 2, certificateId: chain[4]!.certificateId, seq: 5, reason: expect.stringMatching(/^seq gap:/) },
    });
    const adjacent = [...lines];
    [adjacent[3], adjacent[4]] = [adjacent[4]!, adjacent[3]!];
    expect(verifyCertificatesJsonl({ certificates: adjacent }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 4 },
    });
  });

  it('a duplicated certificate is named at the copy', () => {
    const duplicated = [...lines.slice(0, 3), lines[2]!, ...lines.slice(3)];
    expect(verifyCertificatesJsonl({ certificates: duplicated }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 4, seq: 3, reason: 'duplicate seq 3' },
    });
  });

  it('a certificate relinked to a forged predecessor hash is caught (the link is inside the signed body)', () => {
    const relinked = withLine(4, (c) => {
      c.previousCertificateHash = 'a'.repeat(64);
    });
    expect(verifyCertificatesJsonl({ certificates: relinked }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 5, reason: expect.stringMatching(/^hash mismatch:/) },
    });
  });

  it('a line that is not JSON, or not a certificate, is named without quoting it', () => {
    const broken = [...lines];
    broken[1] = '{"certificateId": "crt_x", secret';
    expect(verifyCertificatesJsonl({ certificates: broken }, { publicKeys })).toEqual({
      ok: false,
      firstBad: {
        source: 'certificates',
        line: 2,
        certificateId: null,
        seq: 2,
        reason: 'unreadable line: not valid JSON',
      },
    });
    broken[1] = '[1,2]';
    expect(verifyCertificatesJsonl({ certificates: broken }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 2, reason: 'malformed certificate: not an object' },
    });
  });

  it('blank lines are skipped but still counted in line numbers', () => {
    const spaced = [lines[0]!, '', lines[1]!, '   ', ...lines.slice(2)];
    expect(verifyCertificatesJsonl({ certificates: spaced }, { publicKeys })).toMatchObject({ ok: true, count: 6 });
    spaced[4] = spaced[4]!.replace('"requester":"dpo-1"', '"requester":"dpo-2"');
    expect(verifyCertificatesJsonl({ certificates: spaced }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 5, seq: 3 },
    });
  });

  it('a certificate without an anchor in the audit export is named: not anchored', () => {
    const partialAudit = jsonl(sealAudit(tenant, chain.filter((_, i) => i !== 3).map(certificateAnchor)));
    expect(verifyCertificatesJsonl({ certificates: lines, audit: partialAudit }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: {
        source: 'certificates',
        line: 4,
        certificateId: chain[3]!.certificateId,
        reason: 'not anchored: no erasure.certified entry for this certificate in the audit export',
      },
    });
  });

  it('an anchor recording another hash is named: anchor mismatch', () => {
    const inputs = chain.map(certificateAnchor);
    inputs[2] = { ...inputs[2]!, details: { ...inputs[2]!.details, certificateHash: 'b'.repeat(64) } };
    const otherAudit = jsonl(sealAudit(tenant, inputs));
    expect(verifyCertificatesJsonl({ certificates: lines, audit: otherAudit }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 3, reason: 'anchor mismatch: audit seq 3 records another hash or seq for this certificate' },
    });
  });

  it('a tampered audit export is named in the audit export, at its line', () => {
    const tampered = [...audit];
    tampered[4] = tampered[4]!.replace('"actor":"wf-erasure"', '"actor":"wf-erasurE"');
    const result = verifyCertificatesJsonl({ certificates: lines, audit: tampered }, { publicKeys });
    expect(result).toEqual({
      ok: false,
      firstBad: {
        source: 'audit',
        line: 5,
        certificateId: null,
        seq: 5,
        reason: 'audit chain broken: hash mismatch: the entry was changed after it was sealed',
      },
    });
    // The same verdict as the audit verifier's own.
    expect(verifyAuditJsonl(tampered)).toMatchObject({ ok: false, firstBad: { index: 4, seq: 5 } });
  });

  it('a certificate anchored twice is reported as a duplicate anchor', () => {
    const inputs = [...chain.map(certificateAnchor), { ...certificateAnchor(chain[1]!), idempotencyKey: 'again' }];
    const twice = jsonl(sealAudit(tenant, inputs));
    expect(verifyCertificatesJsonl({ certificates: lines, audit: twice }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: {
        source: 'audit',
        line: 7,
        certificateId: chain[1]!.certificateId,
        reason: expect.stringMatching(/^duplicate anchor:/),
      },
    });
  });

  it('an audit export of another tenant is refused', () => {
    const foreign = jsonl(anchoringAuditChain(chain, 't-other'));
    expect(verifyCertificatesJsonl({ certificates: lines, audit: foreign }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 1, reason: "wrong tenant: expected the audit export's tenant t-other, found t-verify" },
    });
    expect(verifyCertificatesJsonl({ certificates: lines, audit: foreign }, { publicKeys, tenant })).toMatchObject({
      ok: false,
      firstBad: { source: 'audit', reason: 'wrong tenant: the audit export is of tenant t-other, not t-verify' },
    });
  });

  it('an empty export verifies as an empty chain', () => {
    expect(verifyCertificatesJsonl({ certificates: '' }, { publicKeys })).toMatchObject({
      ok: true,
      count: 0,
      firstSeq: null,
    });
  });
});

describe('a period export (certificates issued between two dates)', () => {
  const from = new Date(chain[2]!.issuedAt);
  const to = new Date(chain[4]!.issuedAt);
  const slice = lines.slice(2, 5);

  it('starts mid-chain and verifies with its period declared; its first link is checked against the anchor before it', () => {
    expect(verifyCertificatesJsonl({ certificates: slice, audit }, { publicKeys, from, to })).toMatchObject({
      ok: true,
      count: 3,
      firstSeq: 3,
      lastSeq: 5,
      anchored: 3,
    });
    expect(verifyCertificatesJsonl({ certificates: slice }, { publicKeys, from, to })).toMatchObject({
      ok: true,
      count: 3,
    });
  });

  it('a dropped first or last certificate of the period is caught with the audit export', () => {
    expect(verifyCertificatesJsonl({ certificates: slice.slice(1), audit }, { publicKeys, from, to })).toMatchObject({
      ok: false,
      firstBad: {
        line: 1,
        certificateId: chain[2]!.certificateId,
        seq: 3,
        reason: expect.stringMatching(/^missing certificate: seq 3/),
      },
    });
    expect(verifyCertificatesJsonl({ certificates: slice.slice(0, 2), audit }, { publicKeys, from, to })).toMatchObject(
      {
        ok: false,
        firstBad: {
          line: 3,
          certificateId: chain[4]!.certificateId,
          seq: 5,
          reason: expect.stringMatching(/^missing certificate: seq 5/),
        },
      },
    );
  });

  it('a certificate from outside the declared period is refused', () => {
    expect(verifyCertificatesJsonl({ certificates: lines.slice(2, 6) }, { publicKeys, from, to })).toMatchObject({
      ok: false,
      firstBad: { line: 4, seq: 6, reason: expect.stringMatching(/^outside the period:/) },
    });
  });
});

describe('streaming verification', () => {
  it('gives the same verdicts over streams of lines as over text', async () => {
    const stream = (items: string[]) => Readable.from(items);
    const honest = await verifyCertificatesJsonlStream(
      { certificates: stream(lines), audit: stream(audit) },
      { publicKeys },
    );
    expect(honest).toEqual(verifyCertificatesJsonl({ certificates: lines, audit }, { publicKeys }));
    const removed = lines.filter((_, i) => i !== 4);
    expect(await verifyCertificatesJsonlStream({ certificates: stream(removed) }, { publicKeys })).toEqual(
      verifyCertificatesJsonl({ certificates: removed }, { publicKeys }),
    );
  });

  it('the anchor reader fails exactly where the audit verifier does', () => {
    for (let i = 0; i < audit.length; i++) {
      const tampered = [...audit];
      tampered[i] = tampered[i]!.replace(/"at":"2025/, '"at":"2026');
      const reader = createAnchorReader();
      for (const line of tampered) if (!reader.push(line)) break;
      const read = reader.result();
      const reference = verifyAuditJsonl(tampered);
      expect(read.ok).toBe(false);
      expect(reference.ok).toBe(false);
      if (!read.ok && !reference.ok) expect(read.firstBad.line).toBe(reference.firstBad.index + 1);
    }
  });
});
