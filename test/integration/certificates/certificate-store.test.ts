import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { exportAuditJsonl } from '../../../src/governance/audit/audit-export.js';
import type { AuditEntry, AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import { createMongoAuditLog } from '../../../src/governance/audit/mongo-audit-log.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { ErrorType } from '../../../src/shared/errors.js';
import {
  createMongoCertificateStore,
  type CertificatePeriod,
  type CertificateStore,
} from '../../../src/governance/certificates/certificate-store.js';
import { verifyCertificatesJsonl } from '../../../src/governance/certificates/certificate-verify.js';
import type { DeletionCertificate } from '../../../src/governance/certificates/certificate.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { sampleInput, testSigner } from '../../unit/certificates/certificate-fixtures.js';

let runtime: Runtime;
const signer = testSigner();
const publicKeys = signer.publicKeyPem;
/** Issuers racing from separate processes win one seq per round trip; a loaded 2-core machine needs the margin. */
const CONTENDED_TIMEOUT_MS = 180_000;

beforeAll(async () => {
  runtime = testRuntime();
  await createMongoAuditLog(runtime.db).ensureIndexes();
  await newStore().ensureIndexes();
});

afterAll(async () => {
  await runtime?.close();
});

/** A store of its own, as another worker process would have (no shared head, queue or audit log instance). */
function newStore(options: { audit?: AuditLog; clock?: () => Date } = {}): CertificateStore {
  return createMongoCertificateStore(runtime.db, {
    signer,
    audit: options.audit ?? createMongoAuditLog(runtime.db),
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

async function exportCertificates(
  store: CertificateStore,
  tenant: string,
  period?: CertificatePeriod,
): Promise<string[]> {
  const lines: string[] = [];
  for await (const certificate of store.list(tenant, period)) lines.push(canonicalJson(certificate));
  return lines;
}

async function exportAudit(tenant: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of exportAuditJsonl(createMongoAuditLog(runtime.db), tenant)) lines.push(line.trimEnd());
  return lines;
}

async function anchorsOf(tenant: string, certificateId: string): Promise<AuditEntry[]> {
  const anchors: AuditEntry[] = [];
  for await (const entry of createMongoAuditLog(runtime.db).entries(tenant)) {
    if (entry.action === 'erasure.certified' && entry.target === certificateId) anchors.push(entry);
  }
  return anchors;
}

/** An audit log whose appends fail `failures` times: the process "crashes" after inserting, before anchoring. */
function crashingAudit(failures: number): AuditLog {
  const real = createMongoAuditLog(runtime.db);
  let left = failures;
  return {
    ...real,
    append: async (entry) => {
      if (left-- > 0) throw new Error('simulated crash before the anchor');
      return real.append(entry);
    },
  };
}

describe('the certificate store on MongoDB', () => {
  it(
    'three certificates issued concurrently by three processes form one unbroken chain, each anchored once',
    async () => {
      const tenant = uniqueId('t');
      const issued = await Promise.all([1, 2, 3].map((i) => newStore().issue(sampleInput(tenant, i))));
      expect(issued.map((c) => c.seq).sort()).toEqual([1, 2, 3]);
      const lines = await exportCertificates(newStore(), tenant);
      expect(lines).toHaveLength(3);
      const result = verifyCertificatesJsonl(
        { certificates: lines, audit: await exportAudit(tenant) },
        { publicKeys, tenant },
      );
      expect(result).toMatchObject({ ok: true, count: 3, firstSeq: 1, lastSeq: 3, anchored: 3 });
      for (const certificate of issued) expect(await anchorsOf(tenant, certificate.certificateId)).toHaveLength(1);
    },
    CONTENDED_TIMEOUT_MS,
  );

  it(
    'twelve requests issued concurrently from four processes still form one chain without gaps',
    async () => {
      const tenant = uniqueId('t');
      const stores = Array.from({ length: 4 }, () => newStore());
      await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 4]!.issue(sampleInput(tenant, i))));
      const lines = await exportCertificates(newStore(), tenant);
      expect(
        verifyCertificatesJsonl({ certificates: lines, audit: await exportAudit(tenant) }, { publicKeys }),
      ).toMatchObject({
        ok: true,
        count: 12,
        anchored: 12,
      });
    },
    CONTENDED_TIMEOUT_MS,
  );

  it('issuing the same request twice returns the first certificate, and concurrent duplicates produce one', async () => {
    const tenant = uniqueId('t');
    const store = newStore();
    const first = await store.issue(sampleInput(tenant, 7));
    const again = await store.issue({ ...sampleInput(tenant, 7), requester: 'dpo-2' });
    expect(again).toEqual(first);

    const racing = await Promise.all(Array.from({ length: 5 }, () => newStore().issue(sampleInput(tenant, 8))));
    expect(new Set(racing.map((c) => c.hash)).size).toBe(1);
    expect((await store.head(tenant))?.seq).toBe(2);
    expect(await anchorsOf(tenant, racing[0]!.certificateId)).toHaveLength(1);
  });

  it("a request's partial certificate and its final complete one are two links of the chain", async () => {
    const tenant = uniqueId('t');
    const store = newStore();
    const held = { holdId: 'hold-1', exemptedCount: 1, exemptedIds: ['mem_held'] };
    const partial = await store.issue(sampleInput(tenant, 1, { status: 'partial', holds: [held] }));
    const complete = await store.issue(sampleInput(tenant, 1));
    expect(partial.certificateId).not.toBe(complete.certificateId);
    expect(complete).toMatchObject({ seq: 2, previousCertificateHash: partial.hash });
    expect(await newStore().byRequest(tenant, 'req-1')).toEqual([partial, complete]);
    expect(await newStore().get(tenant, complete.certificateId)).toEqual(complete);
  });

  it('a crash between insert and anchor: the retried issue anchors exactly once', async () => {
    const tenant = uniqueId('t');
    await expect(newStore({ audit: crashingAudit(1) }).issue(sampleInput(tenant, 1))).rejects.toThrow(
      'simulated crash',
    );
    const stored = await newStore().head(tenant);
    expect(stored?.seq).toBe(1);
    expect(await newStore().anchorOf(tenant, stored!.certificateId)).toBeNull();

    const retried = await newStore().issue(sampleInput(tenant, 1));
    expect(retried).toEqual(stored);
    expect(await newStore().issue(sampleInput(tenant, 1))).toEqual(stored);
    const anchors = await anchorsOf(tenant, retried.certificateId);
    expect(anchors).toHaveLength(1);
    expect(anchors[0]!.details).toMatchObject({ certificateHash: retried.hash, certificateSeq: 1 });
    expect(await newStore().anchorOf(tenant, retried.certificateId)).toEqual({
      auditSeq: anchors[0]!.seq,
      auditHash: anchors[0]!.hash,
    });
  });

  it('a head left unanchored by a crashed issuer is anchored by the next issue of the tenant', async () => {
    const tenant = uniqueId('t');
    await expect(newStore({ audit: crashingAudit(1) }).issue(sampleInput(tenant, 1))).rejects.toThrow(
      'simulated crash',
    );
    await newStore().issue(sampleInput(tenant, 2));
    const lines = await exportCertificates(newStore(), tenant);
    expect(
      verifyCertificatesJsonl({ certificates: lines, audit: await exportAudit(tenant) }, { publicKeys }),
    ).toMatchObject({
      ok: true,
      count: 2,
      anchored: 2,
    });
  });

  it('an export verifies offline with its anchors; a tampered export fails naming the entry', async () => {
    const tenant = uniqueId('t');
    const store = newStore();
    const issued: DeletionCertificate[] = [];
    for (let i = 0; i < 4; i++) issued.push(await store.issue(sampleInput(tenant, i)));
    const lines = await exportCertificates(newStore(), tenant);
    const audit = await exportAudit(tenant);
    expect(lines).toEqual(issued.map((c) => canonicalJson(c)));
    expect(verifyCertificatesJsonl({ certificates: lines, audit }, { publicKeys, tenant })).toMatchObject({
      ok: true,
      count: 4,
      anchored: 4,
    });

    const tampered = [...lines];
    tampered[1] = tampered[1]!.replace('"legalGround":"gdpr-art17-1a"', '"legalGround":"correction"');
    expect(verifyCertificatesJsonl({ certificates: tampered, audit }, { publicKeys })).toEqual({
      ok: false,
      firstBad: {
        source: 'certificates',
        line: 2,
        certificateId: issued[1]!.certificateId,
        seq: 2,
        reason: 'hash mismatch: the certificate was changed after it was sealed',
      },
    });
    const withoutThird = lines.filter((_, i) => i !== 2);
    expect(verifyCertificatesJsonl({ certificates: withoutThird, audit }, { publicKeys })).toMatchObject({
      ok: false,
      firstBad: { line: 3, certificateId: issued[3]!.certificateId, reason: expect.stringMatching(/^seq gap/) },
    });
  });

  it('a period export holds exactly the certificates issued in the period and verifies as a slice of the chain', async () => {
    const tenant = uniqueId('t');
    let day = 0;
    const store = newStore({ clock: () => new Date(Date.UTC(2025, 4, 1 + day, 12)) });
    for (day = 0; day < 5; day++) await store.issue(sampleInput(tenant, day));
    const period = { from: new Date(Date.UTC(2025, 4, 2)), to: new Date(Date.UTC(2025, 4, 4, 23, 59, 59, 999)) };
    const lines = await exportCertificates(newStore(), tenant, period);
    expect(lines.map((l) => (JSON.parse(l) as DeletionCertificate).seq)).toEqual([2, 3, 4]);
    const audit = await exportAudit(tenant);
    expect(verifyCertificatesJsonl({ certificates: lines, audit }, { publicKeys, ...period })).toMatchObject({
      ok: true,
      firstSeq: 2,
      lastSeq: 4,
    });
    expect(
      verifyCertificatesJsonl({ certificates: lines.slice(0, 2), audit }, { publicKeys, ...period }),
    ).toMatchObject({
      ok: false,
      firstBad: { seq: 4, reason: expect.stringMatching(/^missing certificate/) },
    });
    expect(await exportCertificates(newStore(), tenant, { from: new Date(Date.UTC(2025, 5, 1)) })).toEqual([]);
    expect(await exportCertificates(newStore(), tenant, { to: new Date(Date.UTC(2025, 4, 1, 23)) })).toHaveLength(1);
  });

  it('certificates are found only within their own tenant', async () => {
    const tenant = uniqueId('t');
    const other = uniqueId('t');
    const store = newStore();
    const certificate = await store.issue(sampleInput(tenant, 1));
    expect(await store.get(other, certificate.certificateId)).toBeNull();
    expect(await store.byRequest(other, 'req-1')).toEqual([]);
    expect(await exportCertificates(store, other)).toEqual([]);
  });

  it('an input carrying personal data is refused before anything is written', async () => {
    const tenant = uniqueId('t');
    const input = sampleInput(tenant, 1);
    await expect(
      newStore().issue({
        ...input,
        closure: { ...input.closure, ids: ['alice@example.com', ...input.closure.ids.slice(1)] },
      }),
    ).rejects.toMatchObject({ type: ErrorType.Validation, field: 'closure.ids.0' });
    expect(await newStore().head(tenant)).toBeNull();
    expect(await exportAudit(tenant)).toEqual([]);
  });
});
