import { randomBytes } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../support/harness.js';
import { claimRunTag, releaseRunTag } from '../../support/run-tag.js';
import { cleanUpTestRun, deleteRunDocuments } from '../../support/stack-cleanup.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * The teardown's MongoDB part, on run tags of this test's own (claimed like a run's, so no running suite holds
 * them) and on three collections (the teardown reads them all): every document of the run's tenants goes;
 * nothing of another run or tenant does.
 */
describe("a test run's cleanup of its MongoDB documents", () => {
  let mongo: MongoClient;
  let db: Db;
  let run: string;
  let other: string;
  /** A run whose teardown this test runs. */
  let ended: string;
  const collections = [Collections.memories, Collections.lineage, Collections.tombstones];
  let ours: string[] = [];
  let theirs: string[] = [];

  beforeAll(async () => {
    const config = testConfig();
    mongo = new MongoClient(config.mongo.uri);
    db = mongo.db(config.mongo.dbName);
    run = await claimRunTag();
    other = await claimRunTag();
    ended = await claimRunTag();
    ours = [`t-${run}${hex(4)}`, `scan-lin-${run}${hex(4)}`];
    // Another run's tenant, and names that carry the tag but are not a name `uniqueId` made in the run.
    theirs = [`t-${other}${hex(4)}`, `t-${run}${hex(4)}0`, `ctl${run}${hex(4)}`, `t-${other}${run}${hex(2)}`];
  });
  afterAll(async () => {
    for (const name of collections)
      for (const tenant of [...ours, ...theirs]) await db.collection(name).deleteMany({ tenant });
    await releaseRunTag(run);
    await releaseRunTag(other);
    await releaseRunTag(ended);
    await mongo.close();
  });

  it('deletes every document of the run’s tenants, and nothing else', async () => {
    // Five documents per tenant and collection: with chunks of two, a tenant's documents also go by ids.
    for (const name of collections) {
      await db
        .collection<{ _id: string; tenant: string }>(name)
        .insertMany(
          [...ours, ...theirs].flatMap((tenant) =>
            Array.from({ length: 5 }, (_, i) => ({ _id: `cleanup-${tenant}-${i}`, tenant })),
          ),
        );
    }
    const result = await deleteRunDocuments(db, run, { chunk: 2, collections });
    expect(result).toEqual({ tenants: ours.length, documents: ours.length * collections.length * 5 });
    for (const name of collections) {
      for (const tenant of ours) expect(await db.collection(name).countDocuments({ tenant }), tenant).toBe(0);
      for (const tenant of theirs) expect(await db.collection(name).countDocuments({ tenant }), tenant).toBe(5);
    }
    // Idempotent.
    expect(await deleteRunDocuments(db, run, { collections })).toEqual({ tenants: 0, documents: 0 });
    // Each `distinct` reads its whole collection on FerretDB: a minute on a shared stack under load.
  }, 180_000);

  it('is done by the teardown: a finished run leaves no document of its tenants', async () => {
    const tenants = [`t-${ended}${hex(4)}`, `scan-lin-${ended}${hex(4)}`];
    ours.push(...tenants);
    for (const name of collections) {
      await db
        .collection<{ _id: string; tenant: string }>(name)
        .insertMany(
          tenants.flatMap((tenant) => Array.from({ length: 3 }, (_, i) => ({ _id: `${tenant}-${i}`, tenant }))),
        );
    }
    // The teardown itself, for a run of this test's own that made nothing else (on the three collections: reading
    // every collection of a shared database takes minutes under load).
    const report = await cleanUpTestRun(new Date(), ended, { collections });
    expect(report).toMatchObject({ tenants: tenants.length, documents: tenants.length * collections.length * 3 });
    for (const name of collections) {
      for (const tenant of tenants) expect(await db.collection(name).countDocuments({ tenant }), tenant).toBe(0);
    }
  }, 120_000);

  it('claims a run tag no other run holds', async () => {
    expect(run).toMatch(/^[0-9a-f]{4}$/);
    expect(other).not.toBe(run);
    expect(process.env.LETHE_TEST_RUN).not.toBe(run);
    const runs = db.collection<{ _id: string }>('test_runs');
    expect(await runs.countDocuments({ _id: run })).toBe(1);
    await expect(runs.insertOne({ _id: run })).rejects.toMatchObject({ code: 11000 });
  });
});
