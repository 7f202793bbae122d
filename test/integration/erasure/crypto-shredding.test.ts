/**
 * Content is sealed before it leaves the process, under a data key of each record's own; an erasure destroys the
 * keys of exactly the records it erases, and a KEK rotation then kills the keys' own copies in the database's log
 * and in backups. This file runs on a database and a KEK keyring of its own, so that its rotation touches no other
 * test's keys.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { testConfig, testRuntime } from '../../support/harness.js';
import { buildSubjectGraph, completeErasure, fileErasure, type SubjectGraph } from '../../support/erasure-fixture.js';
import { backUpTenant, restoreTenant, type TenantBackup } from '../../support/tenant-backup.js';
import { grepFiles } from '../../support/data-files.js';
import { shreddingShown as shreddingShownOn } from '../../support/shredding-page.js';
import { checkpoint, dumpDatabase, postgresDataDirectory, relationOf } from '../../support/postgres-cluster.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadStackConfig, postgresPlacement } from '../../../stack/stack-config.js';
import { freePort } from '../../../stack/processes.js';
import { createServices } from '../../../app/services.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { rotateKeks } from '../../../src/substrate/crypto/kek-rotation.js';
import { reapplyErasures } from '../../../app/cli/commands/restore.command.js';
import type { Runtime } from '../../../app/runtime.js';
import type { DeletionCertificate } from '../../../src/governance/certificates/certificate.js';
import type { ContentRecord } from '../../../src/substrate/crypto/content-cipher.js';

const execFileAsync = promisify(execFile);
const kekDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-shred-'));
/** A database of its own: a KEK rotation re-wraps every data key in the vault it runs on. */
const ownDatabase = () => {
  const uri = new URL(testConfig().mongo.uri);
  uri.pathname = `/lethe_shred_${randomUUID().slice(0, 8)}`;
  return uri.toString();
};
const isolated = { MONGODB_URI: ownDatabase(), LETHE_KEK_FILE: path.join(kekDir, 'kek.json') };
// AWS KMS through the AWS SDK, against the stack's emulator of its API; the SDK reads credentials from the environment.
process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
const inAwsKms = {
  MONGODB_URI: ownDatabase(),
  LETHE_KMS: 'aws-kms',
  LETHE_AWS_KMS_REGION: 'eu-west-1',
  LETHE_AWS_KMS_ENDPOINT: loadStackConfig().kms.url,
  LETHE_AWS_KMS_ALIAS_PREFIX: `alias/lethe-shred-${randomUUID().slice(0, 8)}`,
};

describe.each([
  ['local-file', isolated],
  ['aws-kms', inAwsKms],
])('content sealed at rest, and shredded by an erasure (KEKs in %s)', (kekKind, config) => {
  let app: TestApp;
  let graph: SubjectGraph;
  let backup: TenantBackup;
  let requestId: string;
  let closure: string[];
  /** The erasure's certificates, as an auditor exported them. */
  let issued: DeletionCertificate[];
  /** The operator's pg_dump of the database, taken before the erasure. */
  let dump: string;

  const readAs = async (kind: 'memories' | 'events', id: string) =>
    app.request({
      method: 'GET',
      url: `/v1/tenants/${graph.tenant}/${kind}/${id}`,
      token: await app.token(graph.tenant, ['agent'], graph.writer),
    });
  const memoryControl = () => graph.control.filter((id) => id.startsWith('mem_'));
  const shreddingShown = () => shreddingShownOn(app, graph.tenant, requestId);
  const rawRows = async () => [
    ...(await app.runtime.db.collection(Collections.events).find({ tenant: graph.tenant }).toArray()),
    ...(await app.runtime.db.collection(Collections.memories).find({ tenant: graph.tenant }).toArray()),
    ...(await app.runtime.db.collection(Collections.staging).find({ tenant: graph.tenant }).toArray()),
  ];

  beforeAll(async () => {
    app = await startTestApp({ config });
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    backup = await backUpTenant(
      app.runtime.db,
      app.runtime.es,
      graph.tenant,
      await app.services.index.indexOf(graph.tenant),
    );
  }, 240_000);
  afterAll(async () => {
    await app?.runtime.db.dropDatabase().catch(() => undefined);
    await app?.close();
    fs.rmSync(kekDir, { recursive: true, force: true });
  });

  it('stores no content in clear: the rows hold ciphertext, and every read opens it', async () => {
    const rows = await rawRows();
    expect(rows.length).toBeGreaterThanOrEqual(graph.events.length + graph.memories.length);
    expect(JSON.stringify(rows)).not.toContain(graph.canary);
    for (const row of rows.filter((r) => 'content' in r)) expect(row.content).toMatch(/^lethe-sealed:v2:kp_/);
    const read = await readAs('memories', graph.memories[0]!);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.body).toContain(graph.canary);
    // The backup taken now holds the records' rows and keys, and no content in clear outside the index.
    expect(JSON.stringify(backup.mongo)).not.toContain(graph.canary);
    // Every row's key is in it, in a page of the keys written with it.
    const keyed = new Set(
      backup.mongo[Collections.dataKeys]!.flatMap((d) => (Array.isArray(d.ids) ? (d.ids as string[]) : [d._id])),
    );
    for (const row of rows.filter((r) => 'content' in r)) expect(keyed.has(String(row._id))).toBe(true);
  });

  it('writes no content in clear into any PostgreSQL file, the write-ahead log included, nor into a pg_dump of it', async () => {
    await checkpoint();
    const found = grepFiles(await postgresDataDirectory(), graph.canary);
    const named = await Promise.all(found.map(async (file) => `${file} (${await relationOf(file)})`));
    expect(named).toEqual([]);
    // The operator's logical backup, taken before the erasure: its rows are ciphertext, its data keys wrapped.
    const dumpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-dump-'));
    dump = await dumpDatabase(new URL(config.MONGODB_URI).pathname.slice(1), path.join(dumpDir, `${kekKind}.sql`));
    const text = fs.readFileSync(dump, 'utf8');
    expect(text).toContain(graph.memories[0]);
    expect(text).toContain('lethe-sealed:v2:kp_');
    expect(text).not.toContain(graph.canary);
  });

  it('destroys the data keys of exactly the records it erases, and the certificate names them and the KEK epoch', async () => {
    requestId = await fileErasure(app, graph.tenant, { subjectId: graph.subject });
    const done = await completeErasure(app, graph.tenant, requestId, 'extend');
    expect(done.state).toBe('completed');
    issued = await app.services.certificates.byRequest(graph.tenant, requestId);
    const [certificate] = issued;
    closure = certificate!.closure.ids;
    expect(closure).toEqual(expect.arrayContaining([...graph.events, ...graph.memories]));
    const vault = app.runtime.cipher.vault;
    expect(await vault.idsWithKeys(graph.tenant, closure)).toEqual([]);
    // Every record outside the closure keeps its key and reads as before.
    expect((await vault.idsWithKeys(graph.tenant, graph.control)).sort()).toEqual([...graph.control].sort());
    for (const id of graph.control.filter((c) => !c.startsWith('evt_')))
      expect((await readAs('memories', id)).statusCode).toBe(200);
    expect(certificate!.probes).toContainEqual(
      expect.objectContaining({ kind: 'data-key', target: 'mongodb', checked: closure.length, found: 0 }),
    );
    expect(certificate!.stores).toContainEqual(
      expect.objectContaining({ collection: Collections.dataKeys, deleted: closure.length }),
    );
    const wal = certificate!.assurance.find((a) => a.place === 'postgresql:wal');
    expect(wal?.statement).toMatch(new RegExp(`sealed under per-record data keys .* KEK epoch 1 \\(${kekKind}\\)`));
    expect(wal?.lapses).toEqual({ condition: expect.stringMatching(/^KEK epoch 1 is destroyed by a rotation/) });
    expect(JSON.stringify(wal?.lapses).includes('waiting period')).toBe(kekKind === 'aws-kms');
    // The DPO's page says which epoch, and that it is not destroyed yet.
    expect(await shreddingShown()).toMatchObject({
      epoch: 1,
      epochs: [1],
      lapsedAt: null,
      boundMs: 5000,
      epochDestroyedAt: null,
    });
  });

  it('after a KEK rotation, the pre-erasure backup reads as erased — with the live vault, and entirely with its own', async () => {
    const vault = app.runtime.cipher.vault;
    const rotation = await rotateKeks(vault, vault.keks, { settleMs: 200 });
    expect(rotation).toMatchObject({ epoch: 2, destroyed: [1], kept: [] });
    expect(rotation.rewrapped).toBeGreaterThanOrEqual(graph.control.length);
    expect(await vault.countUnder(1)).toBe(0);
    const shown = await shreddingShown();
    expect(shown.epochDestroyedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Its only live epoch at the purge is destroyed: the copies lapsed then.
    expect(shown.lapsedAt).toBe(shown.epochDestroyedAt);
    // A KMS keeps a disabled key's material for its waiting period: the DPO's page says until when.
    if (kekKind === 'aws-kms')
      expect(Date.parse(shown.epochMaterialDeletedBy!)).toBeGreaterThan(Date.parse(shown.epochDestroyedAt!));
    else expect(shown.epochMaterialDeletedBy).toBeUndefined();

    // The certificates, as an auditor exported them: the backup predates them.
    const certificates = await app.services.certificates.byRequest(graph.tenant, requestId);
    // Restored as the runbook says: records from the backup, keys from the live vault.
    const { [Collections.dataKeys]: oldKeys, [Collections.dataKeyDestructions]: _feed, ...records } = backup.mongo;
    await restoreTenant(app.runtime.db, app.runtime.es, { ...backup, mongo: records });
    for (const id of graph.memories) expect((await readAs('memories', id)).statusCode, id).toBe(404);
    for (const id of graph.events) expect((await readAs('events', id)).statusCode, id).toBe(404);
    for (const id of graph.control.filter((c) => !c.startsWith('evt_')))
      expect((await readAs('memories', id)).statusCode, id).toBe(200);

    // The backup's own copies of the keys are wrapped under the destroyed epoch: nothing of it opens.
    const restoredVault = app.runtime.db.collection(Collections.dataKeys);
    const liveKeys = await restoredVault.find({ tenant: graph.tenant }).toArray();
    await restoredVault.deleteMany({ tenant: graph.tenant });
    await restoredVault.insertMany(oldKeys!);
    const rows = await app.runtime.db
      .collection<ContentRecord>(Collections.memories)
      .find({ tenant: graph.tenant })
      .toArray();
    const fresh = testRuntime(config);
    try {
      await fresh.cipher.vault.ensureIndexes();
      expect(await fresh.cipher.openAll(rows)).toEqual([]);
    } finally {
      await fresh.close();
    }

    // Re-applying the erasures removes the restored rows and the keys the backup brought back.
    const report = await reapplyErasures(app.services, graph.tenant, {
      db: app.runtime.db,
      certificates: (async function* () {
        yield* certificates;
      })(),
      expunge: { attempts: 30, intervalMs: 1000 },
    });
    expect(report.purged.memories + report.purged.events).toBe(closure.length);
    expect(await vault.idsWithKeys(graph.tenant, closure)).toEqual([]);
    // The live vault as it was: the backup's keys were this drill's, not the system's.
    await restoredVault.deleteMany({ tenant: graph.tenant });
    await restoredVault.insertMany(liveKeys);
  });

  it('restored from the pre-erasure pg_dump into a fresh cluster, the erased records read as erased and re-applying removes them', async () => {
    // A fresh state directory: its own PostgreSQL cluster and FerretDB, on ports of their own.
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-restore-'));
    const database = new URL(config.MONGODB_URI).pathname.slice(1);
    const [pgPort, mongoPort] = [await freePort(), await freePort()];
    const freshUri = `mongodb://127.0.0.1:${mongoPort}/${database}`;
    const stackEnv = {
      ...process.env,
      LETHE_STATE_DIR: stateDir,
      LETHE_PG_PORT: String(pgPort),
      MONGODB_URI: freshUri,
    };
    const repoDir = loadStackConfig().repoDir;
    const stack = (command: 'up' | 'down', services: string) =>
      execFileAsync(process.execPath, ['--import', 'tsx', 'stack/cli.ts', command], {
        cwd: repoDir,
        env: { ...stackEnv, LETHE_STACK_SERVICES: services },
        timeout: 180_000,
      });
    // As an operator restores: the cluster and its database first, the dump into it, and FerretDB started on it
    // (FerretDB reads the databases it serves when it starts).
    await stack('up', 'postgres');
    const restored = testRuntime({ ...config, MONGODB_URI: freshUri });
    try {
      await execFileAsync('bash', [path.join(repoDir, 'stack', 'postgres', 'bootstrap.sh'), String(pgPort)]);
      // The GIN companions are in the dump: the event trigger that makes them must not fire again (replica mode).
      await execFileAsync(
        'psql',
        [
          '-q',
          '-h',
          '127.0.0.1',
          '-p',
          String(pgPort),
          '-U',
          'postgres',
          '-d',
          'ferretdb',
          '-v',
          'ON_ERROR_STOP=1',
          '-f',
          dump,
        ],
        { env: { ...process.env, PGOPTIONS: '-c session_replication_role=replica' } },
      );
      await stack('up', 'ferretdb');
      const rows = await restored.db
        .collection<ContentRecord>(Collections.memories)
        .find({ tenant: graph.tenant })
        .toArray();
      expect(rows.map((r) => r._id)).toEqual(expect.arrayContaining([...graph.memories, ...memoryControl()]));
      // With its own key vault nothing opens: every key in the dump is wrapped under the destroyed epoch.
      expect(await restored.cipher.openAll(rows)).toEqual([]);

      // As the runbook says: the key vault from the live system. The erased records' keys are not in it.
      const restoredKeys = restored.db.collection(Collections.dataKeys);
      await restoredKeys.deleteMany({ tenant: graph.tenant });
      await restoredKeys.insertMany(
        await app.runtime.db.collection(Collections.dataKeys).find({ tenant: graph.tenant }).toArray(),
      );
      const opened = (await restored.cipher.openAll(rows)).map((r) => r._id);
      expect(opened.sort()).toEqual(memoryControl().sort());

      const report = await reapplyErasures(createServices(restored), graph.tenant, {
        db: restored.db,
        certificates: (async function* () {
          yield* issued;
        })(),
        expunge: { attempts: 30, intervalMs: 1000 },
      });
      expect(report.purged.memories + report.purged.events).toBe(closure.length);
      const left = await restored.db.collection(Collections.memories).find({ tenant: graph.tenant }).toArray();
      expect(left.map((r) => r._id).sort()).toEqual(memoryControl().sort());
    } finally {
      await restored.close();
      await stack('down', 'ferretdb');
      const { home } = postgresPlacement(stateDir);
      if (home) fs.rmSync(home, { recursive: true, force: true });
      fs.rmSync(stateDir, { recursive: true, force: true });
      fs.rmSync(path.dirname(dump), { recursive: true, force: true });
    }
  }, 240_000);
});

describe('a destroyed data key, in other processes that hold it in memory', () => {
  const runtimes: Runtime[] = [];
  afterAll(async () => {
    await runtimes[0]?.db.dropDatabase().catch(() => undefined);
    await Promise.all(runtimes.map((r) => r.close()));
  });

  it('stops opening content in each of them at their next read of the feed, long before their bound', async () => {
    // Readers that would trust their memory for a minute without the feed: only the feed can stop them sooner.
    const reader = { ...isolated, LETHE_KEY_FEED_POLL_MS: '200', LETHE_KEY_CACHE_BOUND_MS: '60000' };
    const writer = testRuntime(isolated);
    const api = testRuntime(reader);
    const worker = testRuntime(reader);
    runtimes.push(writer, api, worker);
    for (const r of runtimes) await r.cipher.vault.ensureIndexes();
    const tenant = uniqueTenant();
    const record = { _id: `mem_${randomUUID().replaceAll('-', '')}`, tenant, content: 'Ana lives in Porto.' };
    const [sealed] = await writer.cipher.sealAll([record]);
    // Warm: each reader has unwrapped the key and keeps it.
    for (const r of [api, worker]) expect(await r.cipher.openAll([sealed!])).toEqual([record]);
    const destroyedAt = Date.now();
    expect(await writer.cipher.shred(tenant, [record._id])).toBe(1);
    expect(await writer.cipher.openAll([sealed!])).toEqual([]);
    // Waits until each reader stops opening it; the test's timeout (30 s, half the readers' 60 s bound) fails a feed
    // that does not reach them. The times are reported, not asserted.
    const stopped = await Promise.all(
      [api, worker].map(async (r) => {
        while ((await r.cipher.openAll([sealed!])).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        return Date.now() - destroyedAt;
      }),
    );
    console.info(`shred propagation: stopped opening after ${stopped.join(' ms, ')} ms (poll 200 ms)`);
    for (const r of [api, worker]) expect(await r.cipher.openAll([sealed!])).toEqual([]);
  }, 30_000);
});
