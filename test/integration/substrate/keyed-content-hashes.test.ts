/**
 * Content hashes at rest are HMACs under the tenant's own key, never the content's SHA-256: one who holds a backup,
 * or an auditor reading a record's hash, cannot confirm a guess of a short fact. Every store that keeps a hash of
 * content is read raw (MongoDB documents, Elasticsearch `_source`), and nothing of it may equal or contain the
 * SHA-256 of what was written. A DPO still names content by its plain SHA-256, and a re-sent event is still one.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { stepGate } from '../../support/step-gate.js';
import { sampleEvent } from '../../support/samples.js';
import { tenantAtRest, writeFact } from '../../support/tenant-at-rest.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('content hashes at rest are keyed under the tenant’s own key', () => {
  let app: TestApp;
  const tenants = [uniqueTenant(), uniqueTenant()] as const;
  const subject = `alice-${randomUUID().slice(0, 8)}`;
  const run = randomUUID().slice(0, 6);
  // Short facts, the kind a guess confirms; the same in both tenants.
  const said = `Alice is HIV positive (${run}).`;
  const remembered = `Alice has HIV (${run}).`;
  const corrected = `Alice does not have HIV (${run}).`;
  const erasedLater = `Alice moved to Faro (${run}).`;
  const digests = [said, remembered, corrected, erasedLater].map(sha256);
  const event = sampleEvent({ subjects: [subject], content: said, externalId: `ext-${run}` });
  /** What the erasure's probe document held when verification began (read by a gate at that step). */
  const probeRows: Record<string, unknown>[] = [];
  let memoryIds: string[] = [];

  const post = async (tenant: string, url: string, roles: Parameters<TestApp['token']>[1], payload: object) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/${url}`,
      token: await app.token(tenant, roles),
      payload,
    });

  beforeAll(async () => {
    app = await startTestApp({
      activityInterceptors: [
        stepGate(async (type, input) => {
          if (type !== 'verifyErasure' || input.tenant !== tenants[0]) return;
          const doc = await app.runtime.db
            .collection(Collections.erasureProbes)
            .findOne({ _id: input.requestId as never });
          if (doc) probeRows.push(doc);
        }),
      ],
    });
    for (const tenant of tenants) {
      const { memoryId } = await writeFact(
        app,
        tenant,
        [event, sampleEvent({ subjects: [subject], content: erasedLater })],
        { subject, content: remembered },
      );
      const ids = [memoryId];
      if (tenant === tenants[0]) memoryIds = ids;
      const filed = await post(tenant, 'subject-rights/rectification', ['dpo'], {
        requestKey: `rec-${run}`,
        memoryId: ids[0],
        content: corrected,
      });
      expect(filed.statusCode, filed.body).toBe(202);
    }
  }, 240_000);
  afterAll(async () => app?.close());

  it('no document of any store, nor any index document, holds the SHA-256 of content written', async () => {
    const rows = await tenantAtRest(app, tenants[0]);
    expect(rows.some((r) => r.where.startsWith(`${Collections.memories}/`))).toBe(true);
    expect(rows.some((r) => r.where.startsWith(`${Collections.events}/`))).toBe(true);
    expect(rows.some((r) => r.where.startsWith(`${Collections.rectifications}/`))).toBe(true);
    expect(rows.some((r) => r.where.startsWith('es/'))).toBe(true);
    const holding = rows.filter((r) => digests.some((d) => r.text.includes(d))).map((r) => r.where);
    expect(holding).toEqual([]);
  });

  it('each row stores the id of the key its hash was made under, and the same content hashes apart per tenant', async () => {
    const keyId = app.services.tenantMacs.keyId;
    const db = app.runtime.db;
    const row = async (collection: string, tenant: string, filter: object) => {
      const doc = await db.collection(collection).findOne({ tenant, ...filter });
      expect(doc, `${collection} of ${tenant}`).not.toBeNull();
      return doc!;
    };
    const byTenant = await Promise.all(
      tenants.map(async (tenant) => ({
        event: await row(Collections.events, tenant, { externalId: event.externalId }),
        memory: await row(Collections.memories, tenant, {
          attribute: 'health',
          'provenance.derivationRule': 'extract-fact',
        }),
        rectification: await row(Collections.rectifications, tenant, {}),
      })),
    );
    for (const rows of byTenant) {
      for (const doc of [rows.event, rows.memory, rows.rectification]) expect(doc.hashKeyId).toBe(keyId);
    }
    const [a, b] = byTenant as [(typeof byTenant)[0], (typeof byTenant)[0]];
    expect(a.event.contentHash).not.toBe(b.event.contentHash);
    expect(a.event.idempotencyKey).not.toBe(b.event.idempotencyKey);
    expect(a.memory.contentHash).not.toBe(b.memory.contentHash);
    expect(a.rectification.contentHash).not.toBe(b.rectification.contentHash);
    const index = (await app.services.index.indexOf(tenants[0]))!;
    const doc = await app.runtime.es.get<{ contentHash: string; hashKeyId: string }>({ index, id: memoryIds[0]! });
    expect(doc._source).toMatchObject({ contentHash: a.memory.contentHash, hashKeyId: keyId });
  });

  it('a re-sent identical event is the same event: one row, the same id', async () => {
    const first = await post(tenants[0], 'events', ['agent'], event);
    const again = await post(tenants[0], 'events', ['agent'], event);
    expect([first.statusCode, again.statusCode]).toEqual([200, 200]);
    expect(again.json<{ id: string }>().id).toBe(first.json<{ id: string }>().id);
    const rows = await app.runtime.db
      .collection(Collections.events)
      .countDocuments({ tenant: tenants[0], externalId: event.externalId });
    expect(rows).toBe(1);
  });

  it('an erasure by the plain SHA-256 of content finds and erases it; its probe row keeps only keyed hashes', async () => {
    const requestId = await fileErasure(app, tenants[0], { contentFingerprint: sha256(erasedLater) });
    const done = await completeErasure(app, tenants[0], requestId, 'extend');
    expect(done.state).toBe('completed');
    const left = await app.runtime.db
      .collection(Collections.events)
      .countDocuments({ tenant: tenants[0], subjects: subject });
    expect(left).toBe(1);
    expect(probeRows).toHaveLength(1);
    const probe = probeRows[0]!;
    expect((probe.contentHashes as string[]).length).toBeGreaterThan(0);
    expect(probe.hashKeyId).toBe(app.services.tenantMacs.keyId);
    expect(JSON.stringify(probe)).not.toContain(sha256(erasedLater));
    // The other tenant's equal content is not touched.
    expect(
      await app.runtime.db.collection(Collections.events).countDocuments({ tenant: tenants[1], subjects: subject }),
    ).toBe(2);
  }, 240_000);
});
