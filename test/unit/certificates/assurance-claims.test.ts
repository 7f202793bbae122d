/**
 * The assurance claims the erasure writes into every certificate must pass the certificate's own schema (statements
 * of at most 500 printable characters, places as codes): a claim that grows past it would stop every certificate.
 */
import { describe, expect, it } from 'vitest';
import { assuranceClaims } from '../../../activities/erasure/assurance-claims.js';
import { COMPACTED } from '../../../activities/erasure/purge.activities.js';
import { parseCertificateInput } from '../../../src/governance/certificates/certificate-schema.js';
import type { ProbeResult } from '../../../src/governance/certificates/certificate.js';
import { sampleInput } from './certificate-fixtures.js';

describe('assurance claims', () => {
  // Counts as large as a certificate can state, so every number in a statement has its widest form.
  const probes: ProbeResult[] = (['id', 'text', 'vector', 'content-hash', 'subject'] as const).map((kind) => ({
    kind,
    target: kind === 'content-hash' ? 'mongodb' : 'elasticsearch',
    checked: 1_000_000_000,
    found: 0,
  }));
  // The governed search's probe, with everything it could serve listed.
  probes.push({
    kind: 'text',
    target: 'api',
    checked: 1_000_000_000,
    sentences: 1_000_000_000,
    served: 1_000_000_000,
    searched: 1_000_000_000,
    found: 0,
    outside: 0,
  });

  it.each(['postgresql', 'wiredtiger'] as const)('on %s, every claim fits the certificate schema', (backend) => {
    const assurance = assuranceClaims({
      backend,
      indexName: 'lethe-mem-t-0123456789ab-v1',
      probes,
      compacted: COMPACTED,
      otherIndices: ['lethe-mem-t-0123456789ab-v2', 'lethe-mem-t-0123456789ab-v1.e123456789'],
      statedFindings: 1_000_000_000,
    });
    expect(() => parseCertificateInput({ ...sampleInput('t-claims'), assurance })).not.toThrow();
  });

  it("states what the governed search's probe looked at: all it could serve, or the searches of an older verification", () => {
    const apiClaim = (api: ProbeResult) =>
      assuranceClaims({ backend: 'postgresql', indexName: 'i', probes: [api], compacted: COMPACTED }).find(
        (c) => c.place === 'api:search',
      )!.statement;
    const listed = apiClaim({
      kind: 'text',
      target: 'api',
      checked: 40,
      sentences: 40,
      served: 612,
      searched: 32,
      found: 0,
    });
    expect(listed).toMatch(/^40 erased sentences checked against all 612 records the governed search path could serve/);
    expect(listed).toContain('32 of them also searched through it');
    // A verification that searched each sentence (an older worker's) is stated as it was done.
    expect(apiClaim({ kind: 'text', target: 'api', checked: 40, sentences: 40, found: 0 })).toMatch(
      /^40 erased sentences searched through the governed search path/,
    );
  });

  it('claims for the destroyed probe samples what the backend can support: L2 on PostgreSQL, L3 on WiredTiger', () => {
    const probeClaim = (backend: 'postgresql' | 'wiredtiger', checked = true) =>
      assuranceClaims({
        backend,
        indexName: 'i',
        probes,
        compacted: COMPACTED,
        probeCompactionProof: { checked },
      }).find((a) => a.place.endsWith(':erasure_probes'));
    expect(probeClaim('postgresql')).toMatchObject({ place: 'postgresql:erasure_probes', level: 'L2' });
    // Unless no older snapshot was shown closed: then L3 until a later compaction.
    expect(probeClaim('postgresql', false)).toMatchObject({
      level: 'L3',
      lapses: { condition: 'a later compaction runs with no older snapshot open' },
    });
    // WiredTiger's compact returns freed blocks without scrubbing them: the samples' bytes may remain until reused.
    expect(probeClaim('wiredtiger')).toMatchObject({
      place: 'mongodb:erasure_probes',
      level: 'L3',
      lapses: { condition: expect.stringContaining('overwritten') },
    });
  });

  const shredding = { at: new Date('2026-12-01T00:00:00.000Z'), kek: 'local-file', epoch: 3, boundMs: 5000 };
  const claimsWith = (sealing: { records: number; keys: number }) =>
    assuranceClaims({ backend: 'postgresql', indexName: 'i', probes, compacted: COMPACTED, shredding, sealing });

  it('promises the lapse with the KEK epoch only for records that had a key, and states the others in clear', () => {
    const claims = claimsWith({ records: 10, keys: 7 });
    expect(claims.find((a) => a.place === 'postgresql:wal')?.lapses).toMatchObject({
      condition: expect.stringContaining('KEK epoch 3'),
    });
    expect(claims.find((a) => a.place === 'postgresql:wal')?.statement).toContain('the 7 records that had a key');
    expect(claims.find((a) => a.place === 'postgresql:wal:unsealed')).toMatchObject({
      level: 'L3',
      statement: expect.stringContaining('3 of the 10 erased records were written before sealing'),
      lapses: { condition: expect.stringContaining('recycled') },
    });
    expect(claims.find((a) => a.place === 'backups:unsealed')?.lapses).toMatchObject({
      condition: expect.stringContaining('retention'),
    });
    expect(() => parseCertificateInput({ ...sampleInput('t-claims'), assurance: claims })).not.toThrow();
  });

  it('claims no shredding when no key was destroyed, and no unsealed records when every one had a key', () => {
    const none = claimsWith({ records: 4, keys: 0 });
    expect(none.some((a) => a.statement.includes('KEK epoch'))).toBe(false);
    expect(none.find((a) => a.place === 'postgresql:wal')?.statement).toBe(
      'write-ahead records of the deleted documents remain until recycled',
    );
    const all = claimsWith({ records: 4, keys: 4 });
    expect(all.some((a) => a.place.endsWith(':unsealed'))).toBe(false);
    expect(all.find((a) => a.place === 'postgresql:wal')?.lapses).toMatchObject({
      condition: expect.stringContaining('KEK epoch 3'),
    });
  });

  it('names every epoch live at the purge in the lapse, and gives the local keyring its caveat', () => {
    const claims = assuranceClaims({
      backend: 'postgresql',
      indexName: 'i',
      probes,
      compacted: COMPACTED,
      shredding: { ...shredding, epoch: 5, liveEpochs: [2, 5] },
      sealing: { records: 3, keys: 3 },
    });
    const wal = claims.find((a) => a.place === 'postgresql:wal')!;
    expect(wal.statement).toContain('wrapped under KEK epochs 2, 5 (local-file)');
    expect(wal.lapses).toMatchObject({ condition: expect.stringMatching(/^KEK epochs 2, 5 are all destroyed/) });
    expect(claims.find((a) => a.place === 'keyring:local-file')).toMatchObject({
      level: 'L3',
      statement: expect.stringContaining('filesystem snapshot'),
    });
    const kms = assuranceClaims({
      backend: 'postgresql',
      indexName: 'i',
      probes,
      compacted: COMPACTED,
      shredding: { ...shredding, kek: 'aws-kms' },
      sealing: { records: 3, keys: 3 },
    });
    expect(kms.some((a) => a.place.startsWith('keyring:'))).toBe(false);
    expect(() => parseCertificateInput({ ...sampleInput('t-claims'), assurance: claims })).not.toThrow();
  });

  it('dates the lapse of the log and backup copies when rotation is scheduled, within the schema, at the widest', () => {
    const dated = (rotationEveryMs: number, kek = 'local-file') =>
      assuranceClaims({
        backend: 'postgresql',
        indexName: 'i',
        probes,
        compacted: COMPACTED,
        shredding: { ...shredding, kek, epoch: 5, liveEpochs: [2, 3, 4, 5], rotationEveryMs },
        sealing: { records: 1_000_000_000, keys: 999_999_999 },
      });
    // The purge at 2026-12-01T00:00Z, one day's interval, six hours for the run.
    const claims = dated(86_400_000);
    for (const place of ['postgresql:wal', 'backups']) {
      const claim = claims.find((a) => a.place === place)!;
      expect(claim.lapses, place).toEqual({ at: '2026-12-02T06:00:00.000Z' });
      expect(claim.statement).toContain('the rotation scheduled every 1 d destroys them by the lapse date');
      expect(claim.statement).toContain('(audit chain: kek.epoch-destroyed)');
    }
    // Rows that had no key are not dated by a rotation; a snapshot's keyring file is not reached by one.
    expect(claims.find((a) => a.place === 'postgresql:wal:unsealed')?.lapses).toMatchObject({
      condition: expect.any(String),
    });
    expect(claims.find((a) => a.place === 'keyring:local-file')?.lapses).toMatchObject({
      condition: expect.stringContaining('snapshot or backup holding both'),
    });
    expect(dated(90 * 60_000).find((a) => a.place === 'backups')?.statement).toContain('scheduled every 90 min');
    // The widest statement: a KMS's waiting period, four epochs, the largest counts.
    for (const widest of [dated(90 * 86_400_000, 'aws-kms'), claims])
      expect(() => parseCertificateInput({ ...sampleInput('t-claims'), assurance: widest })).not.toThrow();
  });

  it('claims the records and keys gone at L2 only when the compaction showed no older snapshot open, else L3 naming why', () => {
    const claimsWith = (compactionProof?: { checked: boolean; heldBy?: { kind: 'transaction'; since: string } }) =>
      assuranceClaims({
        backend: 'postgresql',
        indexName: 'i',
        probes,
        compacted: COMPACTED,
        shredding,
        sealing: { records: 3, keys: 3 },
        ...(compactionProof ? { compactionProof } : {}),
      });
    const records = (claims: ReturnType<typeof claimsWith>) =>
      claims.filter((a) => a.place === 'postgresql:data_keys' || a.place.startsWith('postgresql:memories,'));
    // records and data keys
    for (const claim of records(claimsWith({ checked: true }))) {
      expect(claim, claim.place).toMatchObject({ level: 'L2', statement: expect.stringContaining('(checked)') });
      expect(claim.lapses).toBeUndefined();
    }
    const held = claimsWith({ checked: true, heldBy: { kind: 'transaction', since: '2026-12-01T00:00:00.000Z' } });
    for (const claim of records(held))
      expect(claim, claim.place).toMatchObject({
        level: 'L3',
        statement: expect.stringContaining(
          'a transaction open since 2026-12-01T00:00:00.000Z could still see deleted rows',
        ),
        lapses: { condition: 'that transaction ends and a later compaction of these tables runs' },
      });
    for (const claim of records(claimsWith()))
      expect(claim, claim.place).toMatchObject({
        level: 'L3',
        statement: expect.stringContaining('LETHE_POSTGRES_URL unset'),
      });
    expect(records(held)).toHaveLength(2);
    for (const claims of [held, claimsWith(), claimsWith({ checked: true })])
      expect(() => parseCertificateInput({ ...sampleInput('t-claims'), assurance: claims })).not.toThrow();
  });
});
