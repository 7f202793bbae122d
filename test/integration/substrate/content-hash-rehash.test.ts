/**
 * Rows written before content hashes were keyed hold the plain SHA-256 (and an event its plain idempotency key).
 * Until `lethe keys rehash` re-keys them, every lookup also matches that form: an erasure by fingerprint finds them,
 * a re-sent event is still the same event, and what an erasure of one tombstoned stays refused. The re-keying leaves
 * no plain hash, changes nothing when run again, and a rotation of the fingerprint key keeps every row matching.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { sampleEvent } from '../../support/samples.js';
import { tenantAtRest, writeFact } from '../../support/tenant-at-rest.js';
import { cliEnvironment, runLethe } from '../../support/cli-process.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { idempotencyKeyOf } from '../../../src/substrate/events/event-store.js';
import { rehashContentHashes } from '../../../src/substrate/content-hash-rehash.js';

type SentEvent = ReturnType<typeof sampleEvent>;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('content hashes written before keying', () => {
  const tenant = uniqueTenant();
  const subject = `bob-${randomUUID().slice(0, 8)}`;
  const run = randomUUID().slice(0, 6);
  const events = ['Bob is HIV positive', 'Bob owes 300 euros', 'Bob moved to Faro', 'Bob is pregnant'].map((fact, i) =>
    sampleEvent({ subjects: [subject], content: `${fact} (${run}).`, externalId: `ext-${run}-${i}` }),
  ) as [SentEvent, SentEvent, SentEvent, SentEvent];
  const remembered = `Bob has HIV (${run}).`;
  const corrected = `Bob does not have HIV (${run}).`;
  const probeId = `era_legacy_${run}`;
  const plainOf = (e: SentEvent) => ({
    contentHash: sha256(e.content),
    idempotencyKey: idempotencyKeyOf(e.source, e.externalId, sha256(e.content)),
  });
  const plain = [...events.flatMap((e) => Object.values(plainOf(e))), sha256(remembered), sha256(corrected)];
  let app: TestApp;
  let eventIds: string[] = [];
  let memoryId = '';
  let oldKeys = '';

  const post = async (url: string, roles: Parameters<TestApp['token']>[1], payload: object) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/${url}`,
      token: await app.token(tenant, roles),
      payload,
    });
  const rehash = () =>
    rehashContentHashes({
      db: app.runtime.db,
      es: app.runtime.es,
      indexPrefix: app.runtime.config.elasticsearch.indexPrefix,
      macs: app.services.tenantMacs,
      tenant,
    });
  const rowsOf = (e: SentEvent) =>
    app.runtime.db.collection(Collections.events).find({ tenant, externalId: e.externalId }).toArray();
  /** A re-sent event is the event already recorded: the same id, one row. */
  async function resentIsTheSame(e: SentEvent, id: string) {
    const again = await post('events', ['agent'], e);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json<{ id: string }>().id).toBe(id);
    expect(await rowsOf(e)).toHaveLength(1);
  }
  async function erasedByFingerprint(content: string, collection: string, id: string) {
    const requestId = await fileErasure(app, tenant, { contentFingerprint: sha256(content) });
    expect((await completeErasure(app, tenant, requestId, 'extend')).state).toBe('completed');
    expect(await app.runtime.db.collection(collection).countDocuments({ _id: id as never })).toBe(0);
  }
  async function stillTombstoned(e: SentEvent) {
    // As an admin, who may know why a write was refused (an agent is told only that it was not admitted now).
    const again = await post('events', ['admin'], e);
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json<{ error: { code: string } }>().error.code, again.body).toBe('Tombstoned');
  }
  /** Every document of the tenant (MongoDB and its index) that holds a plain hash. */
  async function plainAtRest(): Promise<string[]> {
    return (await tenantAtRest(app, tenant)).filter((r) => plain.some((h) => r.text.includes(h))).map((r) => r.where);
  }

  beforeAll(async () => {
    app = await startTestApp();
    oldKeys = app.runtime.config.secrets.fingerprintKeys.map((k) => `${k.id}:${k.secret}`).join(',');
    ({ eventIds, memoryId } = await writeFact(app, tenant, events, { subject, content: remembered }));
    const filed = await post('subject-rights/rectification', ['dpo'], {
      requestKey: `rec-${run}`,
      memoryId,
      content: corrected,
    });
    expect(filed.statusCode, filed.body).toBe(202);

    // Each row as the code before keying wrote it: the plain digest, no key id.
    const db = app.runtime.db;
    const legacy = (fields: object) => ({ $set: fields, $unset: { hashKeyId: '' } });
    for (const e of events)
      await db.collection(Collections.events).updateOne({ tenant, externalId: e.externalId }, legacy(plainOf(e)));
    await db
      .collection(Collections.memories)
      .updateOne({ _id: memoryId as never }, legacy({ contentHash: sha256(remembered) }));
    await db
      .collection(Collections.rectifications)
      .updateOne({ tenant, memoryId }, legacy({ contentHash: sha256(corrected) }));
    await db.collection(Collections.erasureProbes).insertOne({
      _id: probeId as never,
      tenant,
      ids: [],
      contentHashes: [sha256(remembered)],
      subjects: [],
      samples: '',
    });
    // The index document as it was written then: the whole document again, with the plain digest and no key id.
    const index = (await app.services.index.indexOf(tenant))!;
    const indexed = await app.runtime.es.get<Record<string, unknown>>({ index, id: memoryId });
    const { hashKeyId: _keyId, ...before } = indexed._source!;
    await app.runtime.es.index({
      index,
      id: memoryId,
      document: { ...before, contentHash: sha256(remembered) },
      refresh: true,
    });
    expect((await plainAtRest()).length).toBeGreaterThanOrEqual(6);
  }, 240_000);
  afterAll(async () => {
    await app?.runtime.db.collection(Collections.erasureProbes).deleteOne({ _id: probeId as never });
    await app?.close();
  });

  it('before the re-keying, a re-sent event, an erasure by fingerprint and its tombstones match the plain form', async () => {
    await resentIsTheSame(events[0], eventIds[0]!);
    await erasedByFingerprint(events[1].content, Collections.events, eventIds[1]!);
    await stillTombstoned(events[1]);
  }, 240_000);

  it('the re-keying leaves no plain hash at rest, and a second run changes nothing', async () => {
    const first = await rehash();
    expect(first).toMatchObject({
      [Collections.memories]: 1,
      [Collections.rectifications]: 1,
      [Collections.erasureProbes]: 1,
      elasticsearch: 1,
    });
    expect(first[Collections.events]).toBe(3);
    expect(await plainAtRest()).toEqual([]);
    const keyId = app.services.tenantMacs.keyId;
    for (const row of await app.runtime.db.collection(Collections.events).find({ tenant }).toArray())
      expect(row.hashKeyId).toBe(keyId);
    // Run again as an operator would, through the CLI: nothing is left to re-key.
    const env = { ...cliEnvironment(app, 'http://127.0.0.1:9'), LETHE_ENV: 'test' };
    const second = await runLethe(['keys', 'rehash', '--tenant', tenant, '--json'], { env });
    expect(second.code, second.stderr).toBe(0);
    const { rehashed } = JSON.parse(second.stdout) as { rehashed: Record<string, number> };
    expect(Object.keys(rehashed)).toEqual(Object.keys(first));
    expect(
      Object.values(rehashed).every((n) => n === 0),
      second.stdout,
    ).toBe(true);
  });

  it('after the re-keying, the same event, erasure by fingerprint and tombstones still match', async () => {
    await resentIsTheSame(events[0], eventIds[0]!);
    await erasedByFingerprint(events[2].content, Collections.events, eventIds[2]!);
    await stillTombstoned(events[1]);
    await stillTombstoned(events[2]);
  }, 240_000);

  it('with a new fingerprint key current and the old one listed, rows keyed under the old key still match', async () => {
    await app.close();
    const newKey = `k-new:${randomBytes(32).toString('base64url')}`;
    app = await startTestApp({ config: { LETHE_FINGERPRINT_KEYS: `${newKey},${oldKeys}` } });
    await resentIsTheSame(events[0], eventIds[0]!);
    await stillTombstoned(events[1]);
    await erasedByFingerprint(remembered, Collections.memories, memoryId);
    // What is written now is keyed under the new key; the old rows stay as they are (nothing to re-key).
    const later = sampleEvent({ subjects: [subject], content: events[3].content, externalId: `ext-${run}-later` });
    const fresh = await post('events', ['agent'], later);
    expect(fresh.statusCode, fresh.body).toBe(201);
    expect((await rowsOf(later))[0]?.hashKeyId).toBe('k-new');
    expect((await rowsOf(events[3]))[0]?.hashKeyId).not.toBe('k-new');
    // A run after the rotation re-keys no row that is keyed already, under either key: every keyed hash is as it was.
    const keyedHashes = async () =>
      new Map(
        (
          await Promise.all(
            [Collections.events, Collections.memories].map((c) =>
              app.runtime.db
                .collection(c)
                .find({ tenant, hashKeyId: { $exists: true } }, { projection: { contentHash: 1 } })
                .toArray(),
            ),
          )
        )
          .flat()
          .map((r) => [String(r._id), String(r.contentHash)]),
      );
    const before = await keyedHashes();
    expect(before.size).toBeGreaterThan(0);
    const counts = await rehash();
    const after = await keyedHashes();
    for (const [id, hash] of before) expect(after.get(id), `${id} (${JSON.stringify(counts)})`).toBe(hash);
  }, 300_000);
});
