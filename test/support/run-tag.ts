/**
 * The run tag every name a test makes carries (`uniqueId`: `<prefix>-<run tag><8 hex>`), claimed once per run in
 * the test database so that no two runs on the same stack share one: the teardown deletes what carries its tag,
 * and only that. A run's claim goes when its teardown has cleaned up; a run killed before its teardown (or kept
 * with `LETHE_KEEP_TEST_DATA=1`) keeps its claim, so no later run takes its tag and deletes what it left.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { MongoClient, type Collection } from 'mongodb';
import { isDuplicateKey } from '../../src/substrate/mongo/collections.js';
import { testConfig } from './harness.js';

export const TEST_RUNS_COLLECTION = 'test_runs';

interface RunClaim {
  _id: string;
  startedAt: Date;
  host: string;
  pid: number;
}

async function withTestRuns<T>(fn: (runs: Collection<RunClaim>) => Promise<T>): Promise<T> {
  const config = testConfig();
  const mongo = new MongoClient(config.mongo.uri);
  try {
    return await fn(mongo.db(config.mongo.dbName).collection<RunClaim>(TEST_RUNS_COLLECTION));
  } finally {
    await mongo.close();
  }
}

/** A 4-hex run tag no other run on this stack holds (the unique `_id` insert is the arbiter). */
export function claimRunTag(): Promise<string> {
  return withTestRuns(async (runs) => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const tag = randomUUID().slice(0, 4);
      try {
        await runs.insertOne({ _id: tag, startedAt: new Date(), host: os.hostname(), pid: process.pid });
        return tag;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    }
    throw new Error(`no free test run tag after 100 tries: see the ${TEST_RUNS_COLLECTION} collection`);
  });
}

export function releaseRunTag(tag: string): Promise<void> {
  return withTestRuns(async (runs) => {
    await runs.deleteOne({ _id: tag });
  });
}
