/**
 * A record's governance marks and status moves survive the local server's whole-row rewrites. FerretDB updates a
 * document by reading it and writing the whole document back, so any update computed from an older read can land
 * after a newer write and put the row back as it was. The rewrite is made here as the server makes it: the row as
 * read before, written back by `_id`. Real database, read through the stores as every route reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { createMongoEventStore } from '../../../src/substrate/events/event-store.js';
import { createTenantMacs } from '../../../src/substrate/fingerprint.js';
import { createMongoMemoryStore, type MemoryStore } from '../../../src/substrate/memories/memory-store.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { memoryRecord } from '../../support/samples.js';

let runtime: Runtime;
let store: MemoryStore;
const tenant = uniqueId('record-marks');
let n = 0;

const rows = () => runtime.db.collection<MemoryRecord>(Collections.memories);
/** A memory written through the store, and its row as a concurrent writer read it just then. */
async function written(): Promise<MemoryRecord> {
  const record = memoryRecord(tenant, `mem_${tenant}_${n++}`, `a stored fact number ${n}`);
  expect(await store.insert(record)).toBe('created');
  return (await rows().findOne({ _id: record._id }))!;
}
/** Another writer's update from its older read lands now: the row as it was read, written back whole. */
const rewriteFrom = (before: MemoryRecord) => rows().replaceOne({ _id: before._id }, before);

beforeAll(() => {
  runtime = testRuntime();
  store = createMongoMemoryStore(runtime.db, runtime.cipher);
});
afterAll(async () => {
  for (const name of [Collections.memories, Collections.events, Collections.recordMarks, Collections.transitions])
    await runtime.db.collection(name).deleteMany({ tenant });
  await runtime.db.collection(Collections.deletionMarks).deleteMany({ tenant });
  await runtime.close();
});

describe('marks kept beside the row', () => {
  it('keeps a legal hold, a contest and a stale flag when a rewrite from an older read lands after them', async () => {
    const held = await written();
    const contested = await written();
    const flagged = await written();
    await store.restrict(tenant, [held._id], 'hold-1');
    await store.contest(tenant, contested._id, 'rct-1', true);
    await store.flagStale(tenant, [flagged._id], { because: 'rectification:rct-0', since: new Date() });
    for (const before of [held, contested, flagged]) await rewriteFrom(before);

    expect((await store.get(tenant, held._id))?.restrictedBy).toEqual(['hold-1']);
    expect((await store.get(tenant, contested._id))?.contestedBy).toEqual(['rct-1']);
    expect((await store.get(tenant, flagged._id))?.stale?.because).toBe('rectification:rct-0');
    // Every read shape lays them on, not only the single read.
    const many = await store.getMany(tenant, [held._id, contested._id, flagged._id]);
    expect(many.map((m) => [m.restrictedBy, m.contestedBy, m.stale?.because])).toEqual([
      [['hold-1'], undefined, undefined],
      [undefined, ['rct-1'], undefined],
      [undefined, undefined, 'rectification:rct-0'],
    ]);
  });

  it('keeps the first stale flag, takes a contest back once, and forgets the marks of a purged record', async () => {
    const record = await written();
    const first = new Date('2026-01-01T00:00:00Z');
    await store.flagStale(tenant, [record._id], { because: 'rectification:first', since: first });
    await store.flagStale(tenant, [record._id], { because: 'rectification:second', since: new Date() });
    expect((await store.get(tenant, record._id))?.stale).toEqual({ because: 'rectification:first', since: first });

    expect(await store.contest(tenant, record._id, 'rct-2', true)).toBe(true);
    expect(await store.contest(tenant, record._id, 'rct-2', true)).toBe(true);
    expect((await store.get(tenant, record._id))?.contestedBy).toEqual(['rct-2']);
    expect(await store.contest(tenant, record._id, 'rct-2', false)).toBe(true);
    expect((await store.get(tenant, record._id))?.contestedBy).toBeUndefined();

    await store.restrict(tenant, [record._id], 'hold-2');
    expect(await store.purge(tenant, [record._id])).toBe(1);
    expect(await runtime.db.collection(Collections.recordMarks).countDocuments({ tenant, record: record._id })).toBe(0);
    expect(await store.contest(tenant, record._id, 'rct-3', true)).toBe(false);
  });

  it('forgets every mark of a large purge, and only those: the records kept keep theirs', async () => {
    const records = await Promise.all(Array.from({ length: 300 }, () => written()));
    const purged = records.slice(0, 280).map((r) => r._id);
    const kept = records.slice(280).map((r) => r._id);
    // Marks on a few purged records (two kinds on one), and on every kept one.
    await store.restrict(tenant, [purged[0]!, purged[139]!, purged[279]!, ...kept], 'hold-large');
    await store.flagStale(tenant, [purged[139]!], { because: 'rectification:large', since: new Date() });
    expect(await store.purge(tenant, purged)).toBe(280);
    const marks = runtime.db.collection(Collections.recordMarks);
    expect(await marks.countDocuments({ tenant, record: { $in: purged } })).toBe(0);
    expect(await marks.countDocuments({ tenant, record: { $in: kept } })).toBe(kept.length);
    expect((await store.getMany(tenant, kept)).every((r) => r.restrictedBy?.includes('hold-large'))).toBe(true);
  });

  it('takes back a contest that a row written before marks had their own documents carries', async () => {
    const record = await written();
    await rows().updateOne({ _id: record._id }, { $set: { contestedBy: ['rct-legacy'] } });
    expect((await store.get(tenant, record._id))?.contestedBy).toEqual(['rct-legacy']);
    await store.contest(tenant, record._id, 'rct-legacy', false);
    expect((await store.get(tenant, record._id))?.contestedBy ?? []).toEqual([]);
  });

  it('keeps an event hold and a correction mark when the event row is written back from an older read', async () => {
    const events = createMongoEventStore(
      runtime.db,
      createTenantMacs(runtime.config.secrets.fingerprintKeys),
      runtime.cipher,
    );
    const { event } = await events.record({
      tenant,
      namespace: 'crm',
      source: 'test',
      externalId: `${tenant}-e1`,
      content: 'The customer asked for a call back.',
      subjects: ['subj-1'],
      sensitivity: 'internal',
      trustTier: 2,
      occurredAt: new Date(),
      recordedBy: 'agent-1',
      scope: 'tenant',
    });
    const before = (await runtime.db.collection<{ _id: string }>(Collections.events).findOne({ _id: event._id }))!;
    await events.restrict(tenant, [event._id], 'hold-3');
    expect(await events.markCorrected(tenant, [event._id, 'evt_missing'], 'rct-4')).toBe(1);
    await runtime.db.collection<{ _id: string }>(Collections.events).replaceOne({ _id: event._id }, before);
    const read = await events.get(tenant, event._id);
    expect(read).toMatchObject({ restrictedBy: ['hold-3'], correctedBy: ['rct-4'] });
    expect((await events.getMany(tenant, [event._id]))[0]).toMatchObject({ restrictedBy: ['hold-3'] });
  });
});

describe('moves that read as made', () => {
  it('reads a claimed move as made while its writer has not written the row (it died between claim and row)', async () => {
    const record = await written();
    // What a writer leaves when it dies after claiming: its in-flight mark and its guard, the row untouched.
    await runtime.db
      .collection(Collections.deletionMarks)
      .insertOne({ _id: `${tenant}:move:died` as never, tenant, requestId: 'move:died', at: new Date() });
    await runtime.db.collection(Collections.transitions).insertOne({
      _id: `${record._id}:${record.version}` as never,
      tenant,
      from: 'active',
      to: 'disputed',
      reason: 'dispute:d-1',
      at: new Date(),
    });
    expect((await rows().findOne({ _id: record._id }))?.status).toBe('active');
    const read = await store.get(tenant, record._id);
    expect(read).toMatchObject({ status: 'disputed', statusReason: 'dispute:d-1', version: record.version + 1 });
    expect((await store.getMany(tenant, [record._id]))[0]?.status).toBe('disputed');
    // A later mover from the old status loses to the claim and finishes it forward.
    expect(await store.transition(tenant, record._id, 'active', 'superseded', 'test')).toBe(false);
    expect((await rows().findOne({ _id: record._id }))?.status).toBe('disputed');
  });

  it('reads a move as made when a rewrite from an older read lands after it, and settles the row', async () => {
    const record = await written();
    expect(await store.transition(tenant, record._id, 'active', 'disputed', 'dispute:d-2')).toBe(true);
    await rewriteFrom(record);
    // A move in flight elsewhere in the tenant: reads follow the guards of the rows' versions.
    await runtime.db
      .collection(Collections.deletionMarks)
      .insertOne({ _id: `${tenant}:move:other` as never, tenant, requestId: 'move:other', at: new Date() });
    expect((await store.get(tenant, record._id))?.status).toBe('disputed');
    await store.settle(tenant, [record._id]);
    expect((await rows().findOne({ _id: record._id }))?.status).toBe('disputed');
  });

  it('closes the mark of every move it makes', async () => {
    await runtime.db.collection(Collections.deletionMarks).deleteMany({ tenant });
    const a = await written();
    const b = await written();
    expect(await store.transition(tenant, a._id, 'active', 'disputed', 'dispute:d-3')).toBe(true);
    const many = await store.transitionMany(tenant, [b], 'disputed', 'dispute:d-4');
    expect(many.moved).toEqual([b._id]);
    expect(await runtime.db.collection(Collections.deletionMarks).countDocuments({ tenant })).toBe(0);
  });
});
