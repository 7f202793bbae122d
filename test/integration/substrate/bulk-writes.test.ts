/**
 * Admission's bulk writes on the real database: a batch's events and records each in one unordered insert, its lineage
 * in another. A retried batch must find what its first attempt wrote and report it (never overwrite it, never fail on
 * it), events of one external id must be recorded in order (a correction names what it corrects), and registering
 * the same edges twice must leave one of each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { createMongoEventStore, idempotencyKeyOf, type NewEvent } from '../../../src/substrate/events/event-store.js';
import { createTenantMacs } from '../../../src/substrate/fingerprint.js';
import { createMongoLineageStore } from '../../../src/substrate/lineage/lineage-store.js';
import { createMongoMemoryStore } from '../../../src/substrate/memories/memory-store.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { sha256Hex } from '../../../src/shared/sha256.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { memoryRecord } from '../../support/samples.js';

let runtime: Runtime;
const tenant = uniqueId('bulk-writes');

beforeAll(() => {
  runtime = testRuntime();
});

afterAll(async () => {
  await runtime.db.collection(Collections.memories).deleteMany({ tenant });
  await runtime.db.collection(Collections.events).deleteMany({ tenant });
  await runtime.db.collection(Collections.lineage).deleteMany({ tenant });
  await runtime.close();
});

describe('bulk writes of a batch', () => {
  it('inserts the records of a batch, and a retry reports the ones already there without touching them', async () => {
    const store = createMongoMemoryStore(runtime.db, runtime.cipher);
    const records = [0, 1, 2, 3].map((n) => memoryRecord(tenant, `${tenant}-m${n}`, `fact number ${n}`));
    expect(await store.insertMany([records[1]!])).toEqual(['created']);
    const retried = { ...records[1]!, content: 'another text under the same id' };
    expect(await store.insertMany([records[0]!, retried, records[2]!, records[3]!])).toEqual([
      'created',
      'exists',
      'created',
      'created',
    ]);
    expect((await store.get(tenant, records[1]!._id))?.content).toBe('fact number 1');
    expect(await store.insertMany(records)).toEqual(['exists', 'exists', 'exists', 'exists']);
    expect(await runtime.db.collection(Collections.memories).countDocuments({ tenant })).toBe(4);
  });

  it('records a batch of events as one by one: re-deliveries are duplicates, a later event of an id corrects the one before', async () => {
    const events = createMongoEventStore(
      runtime.db,
      createTenantMacs(runtime.config.secrets.fingerprintKeys),
      runtime.cipher,
    );
    const event = (externalId: string, content: string): NewEvent => ({
      tenant,
      namespace: 'crm',
      source: 'bulk',
      externalId: `${tenant}-${externalId}`,
      content,
      subjects: ['subj-bulk'],
      sensitivity: 'internal',
      trustTier: 2,
      occurredAt: new Date(),
      recordedBy: 'agent-1',
      scope: 'tenant',
    });
    const first = await events.record(event('a', 'The customer moved to Porto.'));
    const written = await events.recordMany([
      event('a', 'The customer moved to Porto.'),
      event('b', 'The customer prefers e-mail.'),
      event('c', 'The customer has two children.'),
      event('b', 'The customer prefers the phone.'),
      event('b', 'The customer prefers the phone.'),
      event('a', 'The customer moved to Braga.'),
    ]);
    expect(written.map((w) => w.outcome)).toEqual([
      'duplicate',
      'created',
      'created',
      'correction',
      'duplicate',
      'correction',
    ]);
    expect(written[0]!.event._id).toBe(first.event._id);
    expect(written[3]!.event.correctionOf).toBe(written[1]!.event._id);
    expect(written[4]!.event._id).toBe(written[3]!.event._id);
    expect(written[5]!.event.correctionOf).toBe(first.event._id);
    expect(written.map((w) => w.event.content)).toEqual([
      'The customer moved to Porto.',
      'The customer prefers e-mail.',
      'The customer has two children.',
      'The customer prefers the phone.',
      'The customer prefers the phone.',
      'The customer moved to Braga.',
    ]);
    expect(await runtime.db.collection(Collections.events).countDocuments({ tenant })).toBe(5);
    // A retry of the whole batch writes nothing and finds each as recorded.
    const again = await events.recordMany([
      event('b', 'The customer prefers e-mail.'),
      event('c', 'The customer has two children.'),
    ]);
    expect(again.map((w) => [w.outcome, w.event._id])).toEqual([
      ['duplicate', written[1]!.event._id],
      ['duplicate', written[2]!.event._id],
    ]);
    expect((await events.get(tenant, written[5]!.event._id))?.content).toBe('The customer moved to Braga.');
  });

  it('finds a re-delivery however many corrections of its external id came after it', async () => {
    const events = createMongoEventStore(
      runtime.db,
      createTenantMacs(runtime.config.secrets.fingerprintKeys),
      runtime.cipher,
    );
    const event = (n: number): NewEvent => ({
      tenant,
      namespace: 'crm',
      source: 'bulk-many',
      externalId: `${tenant}-address`,
      content: `The customer moved, move number ${n}.`,
      subjects: ['subj-bulk-many'],
      sensitivity: 'internal',
      trustTier: 2,
      occurredAt: new Date(),
      recordedBy: 'agent-1',
      scope: 'tenant',
    });
    // More versions of one external id than are read at once to look for a re-delivery among them.
    const versions = await events.recordMany(Array.from({ length: 40 }, (_, n) => event(n)));
    expect(versions.filter((w) => w.outcome === 'correction')).toHaveLength(39);
    versions.slice(1).forEach((w, n) => expect(w.event.correctionOf).toBe(versions[n]!.event._id));
    // The first version as a row written before ids and idempotency keys were keyed: neither unique key catches its
    // re-delivery, which must be found by looking.
    const plainKey = idempotencyKeyOf('bulk-many', `${tenant}-address`, sha256Hex(event(0).content));
    const legacyId = `evt_${plainKey.slice(0, 32)}`;
    const rows = runtime.db.collection(Collections.events);
    const first = await rows.findOne({ _id: versions[0]!.event._id as never });
    await rows.deleteOne({ _id: versions[0]!.event._id as never });
    await rows.insertOne({ ...first!, _id: legacyId as never, idempotencyKey: plainKey });
    const again = await events.recordMany([event(0), event(20), event(39), event(40)]);
    expect(again.map((w) => w.outcome)).toEqual(['duplicate', 'duplicate', 'duplicate', 'correction']);
    expect(again.slice(0, 3).map((w) => w.event._id)).toEqual([
      legacyId,
      versions[20]!.event._id,
      versions[39]!.event._id,
    ]);
    expect(again[0]!.event.content).toBe('The customer moved, move number 0.');
    expect(again[3]!.event.correctionOf).toBe(versions[39]!.event._id);
    // One event at a time finds it the same way, and a new version corrects the latest.
    expect(await events.record(event(0))).toMatchObject({ outcome: 'duplicate', event: { _id: legacyId } });
    const next = await events.record(event(41));
    expect(next).toMatchObject({ outcome: 'correction', event: { correctionOf: again[3]!.event._id } });
    expect(await rows.countDocuments({ tenant, source: 'bulk-many' })).toBe(42);
  });

  it('registers a batch of derivations once, however often it is retried, and the closure walks them', async () => {
    const lineage = createMongoLineageStore(runtime.db);
    const derivations = [
      { child: `${tenant}-b`, inputs: [`${tenant}-a`] },
      { child: `${tenant}-c`, inputs: [`${tenant}-a`, `${tenant}-b`, `${tenant}-a`] },
    ];
    await lineage.registerMany(tenant, derivations);
    await lineage.registerMany(tenant, [...derivations, { child: `${tenant}-d`, inputs: [`${tenant}-c`] }]);
    expect(await runtime.db.collection(Collections.lineage).countDocuments({ tenant })).toBe(4);
    expect(new Set((await lineage.closure(tenant, [`${tenant}-a`])).derived)).toEqual(
      new Set([`${tenant}-b`, `${tenant}-c`, `${tenant}-d`]),
    );
  });
});
