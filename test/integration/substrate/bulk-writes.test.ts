/**
 * Admission's bulk writes on the real database: a batch's records in one unordered insert, its lineage in another.
 * A retried batch must find what its first attempt wrote and report it (never overwrite it, never fail on it), and
 * registering the same edges twice must leave one of each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { createMongoLineageStore } from '../../../src/substrate/lineage/lineage-store.js';
import { createMongoMemoryStore } from '../../../src/substrate/memories/memory-store.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { memoryRecord } from '../../support/samples.js';

let runtime: Runtime;
const tenant = uniqueId('bulk-writes');

beforeAll(() => {
  runtime = testRuntime();
});

afterAll(async () => {
  await runtime.db.collection(Collections.memories).deleteMany({ tenant });
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
