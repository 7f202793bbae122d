/**
 * `VACUUM FULL` keeps every deleted row an open snapshot may still see: a compaction proves erased rows gone only
 * when no snapshot older than it is open. Against the local stack's PostgreSQL under FerretDB, bytes read from the
 * table files: a transaction that began before the delete keeps the deleted row in the rewritten table, the
 * compaction says so (and waits while it can), and once it ends a compaction drops the row.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import { testRuntime } from '../../support/harness.js';
import { checkpoint, postgresDataDirectory } from '../../support/postgres-cluster.js';
import { grepFiles } from '../../support/data-files.js';
import type { Runtime } from '../../../app/runtime.js';
import { compactProved } from '../../../src/substrate/postgres/proved-compaction.js';
import {
  createPostgresSnapshotHorizon,
  type SnapshotHorizon,
} from '../../../src/substrate/postgres/snapshot-horizon.js';

describe('a compaction that proves what it dropped', () => {
  let runtime: Runtime;
  let db: Db;
  let horizon: SnapshotHorizon;
  let tables: string;
  const collection = `proved_${randomUUID().slice(0, 8)}`;

  /** A session of its own that began a transaction and took its snapshot: it can read rows deleted after that. */
  const openSnapshot = async () => {
    const client = new pg.Client({ connectionString: runtime.config.postgres.url });
    await client.connect();
    await client.query('begin isolation level repeatable read');
    await client.query('select 1');
    const { rows } = await client.query<{ started: Date }>(
      'select xact_start as started from pg_stat_activity where pid = pg_backend_pid()',
    );
    return { started: rows[0]!.started, end: async () => client.query('commit').then(() => client.end()) };
  };
  /** Table files (not the write-ahead log, which keeps every insert until recycled) holding the canary. */
  const inTables = async (canary: string) => {
    await checkpoint();
    return grepFiles(tables, canary);
  };
  const writeAndDelete = async () => {
    const canary = `COMPACTION-CANARY-${randomUUID()}`;
    await db.collection(collection).insertOne({ _id: canary as never, tenant: 't', content: canary });
    return {
      canary,
      remove: async () =>
        expect((await db.collection(collection).deleteOne({ _id: canary as never })).deletedCount).toBe(1),
    };
  };

  beforeAll(async () => {
    runtime = testRuntime();
    expect(runtime.config.postgres.url, 'the local stack configures its PostgreSQL').toBeDefined();
    db = runtime.mongo.db(`lethe_proved_${randomUUID().slice(0, 8)}`);
    horizon = createPostgresSnapshotHorizon(runtime.config.postgres.url!);
    tables = path.join(await postgresDataDirectory(), 'base');
    await db.collection(collection).insertOne({ _id: 'seed' as never, tenant: 't' });
  });
  afterAll(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await horizon?.close();
    await runtime?.close();
  });

  it('with no older snapshot open, compacts at once, proves it, and the deleted row is gone from the table files', async () => {
    const { canary, remove } = await writeAndDelete();
    await remove();
    const { compacted, proof } = await compactProved(db, [collection], horizon, { waitMs: 30_000, pollMs: 200 });
    expect(compacted).toEqual([collection]);
    expect(proof).toMatchObject({ checked: true });
    expect(proof.heldBy).toBeUndefined();
    expect(await inTables(canary)).toEqual([]);
  });

  it('a transaction begun before the delete keeps the row through VACUUM FULL; the compaction waits, then names it', async () => {
    const { canary, remove } = await writeAndDelete();
    const reader = await openSnapshot();
    try {
      await remove();
      const { proof } = await compactProved(db, [collection], horizon, { waitMs: 1500, pollMs: 200 });
      expect(proof.checked).toBe(true);
      expect(proof.waitedMs).toBeGreaterThanOrEqual(1500);
      expect(proof.heldBy).toEqual({ kind: 'transaction', since: reader.started.toISOString() });
      // What it says is what the bytes show: the rewritten table still holds the deleted row.
      expect((await inTables(canary)).length).toBeGreaterThan(0);
    } finally {
      await reader.end();
    }
    // Once it has ended, the next compaction drops the row and proves it.
    const { proof } = await compactProved(db, [collection], horizon, { waitMs: 30_000, pollMs: 200 });
    expect(proof.heldBy).toBeUndefined();
    expect(await inTables(canary)).toEqual([]);
  });

  it('waits for an older snapshot that ends during its wait, and then proves the compaction', async () => {
    const { canary, remove } = await writeAndDelete();
    const reader = await openSnapshot();
    await remove();
    const ended = new Promise((resolve) => setTimeout(resolve, 1000)).then(() => reader.end());
    const { proof } = await compactProved(db, [collection], horizon, { waitMs: 30_000, pollMs: 100 });
    await ended;
    expect(proof.heldBy).toBeUndefined();
    expect(proof.waitedMs).toBeGreaterThanOrEqual(900);
    expect(await inTables(canary)).toEqual([]);
  });

  it('without a horizon to read, compacts and says it could not check', async () => {
    const { proof } = await compactProved(db, [collection], undefined);
    expect(proof).toEqual({ checked: false });
  });
});
