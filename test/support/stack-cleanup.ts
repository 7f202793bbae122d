/**
 * What a test run leaves on the developer's stack, removed at its end: the Elasticsearch indices of test
 * tenants, the retention schedules and registrations of test tenants, workflows still waiting on a test's task
 * queue, the run's MongoDB documents, and captured mail older than the run. Only what a test creates is touched
 * (test tenants are `t-<4 hex run tag><8 hex>`, test task queues `tq-<run tag><8 hex>`), and only what this run
 * created (its run tag) or what a run killed before its teardown left hours ago, so a second run on the same
 * stack keeps its own. MongoDB documents are deleted for this run's tenants only (any `<prefix>-<run tag><8 hex>`
 * that `uniqueId` made), never a stale run's: the run tag is claimed (`run-tag.ts`), so no other run has it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Client as Elasticsearch } from '@elastic/elasticsearch';
import { MongoClient, type Collection, type Db } from 'mongodb';
import { testConfig } from './harness.js';
import { loadStackConfig } from '../../stack/stack-config.js';
import { mapBounded } from '../../src/substrate/mongo/collections.js';

const TEST_TENANT = /^t-([0-9a-f]{4})[0-9a-f]{8}$/;
const TEST_QUEUE = /^tq-([0-9a-f]{4})[0-9a-f]{8}$/;
/** What an earlier run that was killed before its teardown left: old enough that no run still uses it. */
const STALE_MS = 2 * 60 * 60 * 1000;

/** Made by this run (its tag), or left by a run long finished. */
function cleanable(name: string, pattern: RegExp, created: Date, since: Date, run: string): boolean {
  const match = pattern.exec(name);
  if (!match) return false;
  return (match[1] === run && created >= since) || created.getTime() < since.getTime() - STALE_MS;
}

export interface CleanupReport {
  indices: number;
  schedules: number;
  workflows: number;
  registrations: number;
  /** This run's tenants that had documents in MongoDB, and the documents deleted. */
  tenants: number;
  documents: number;
  mail: number;
}

/** `collections`: where to look for the run's documents (every collection of the database by default). */
export async function cleanUpTestRun(
  since: Date,
  run: string,
  options: { collections?: string[] } = {},
): Promise<CleanupReport> {
  const config = testConfig();
  const report: CleanupReport = {
    indices: 0,
    schedules: 0,
    workflows: 0,
    registrations: 0,
    tenants: 0,
    documents: 0,
    mail: 0,
  };

  const es = new Elasticsearch({ node: config.elasticsearch.url });
  try {
    const prefix = `${config.elasticsearch.indexPrefix}-mem-`;
    const indices = await es.cat.indices({ index: `${prefix}t-*`, format: 'json', h: ['index', 'creation.date'] });
    const ours = indices
      .filter((i) =>
        cleanable(
          tenantOfIndex(String(i.index), prefix),
          TEST_TENANT,
          new Date(Number(i['creation.date'])),
          since,
          run,
        ),
      )
      .map((i) => String(i.index));
    // Named one by one: deleting by wildcard is refused by default (action.destructive_requires_name).
    for (let at = 0; at < ours.length; at += 50) {
      await es.indices.delete({ index: ours.slice(at, at + 50), ignore_unavailable: true });
    }
    report.indices = ours.length;
  } finally {
    await es.close();
  }

  const connection = await Connection.connect({ address: config.temporal.address });
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace });
    for await (const schedule of client.schedule.list()) {
      const tenant = schedule.scheduleId.replace(/^retention-sweep-/, '');
      if (schedule.scheduleId === tenant || !TEST_TENANT.test(tenant)) continue;
      const described = await client.schedule
        .getHandle(schedule.scheduleId)
        .describe()
        .catch(() => null);
      if (!described || !cleanable(tenant, TEST_TENANT, described.info.createdAt, since, run)) continue;
      await client.schedule
        .getHandle(schedule.scheduleId)
        .delete()
        .catch(() => undefined);
      report.schedules++;
    }
    for await (const execution of client.workflow.list({ query: 'ExecutionStatus = "Running"' })) {
      if (!cleanable(execution.taskQueue, TEST_QUEUE, execution.startTime, since, run)) continue;
      await client.workflow
        .getHandle(execution.workflowId, execution.runId)
        .terminate('test run finished')
        .catch(() => undefined);
      report.workflows++;
    }
  } finally {
    await connection.close();
  }

  const mongo = new MongoClient(config.mongo.uri);
  try {
    const sweeps = mongo.db(config.mongo.dbName).collection<{ _id: string; registeredAt: Date }>('retention_sweeps');
    const registered = await sweeps.find({}, { projection: { _id: 1, registeredAt: 1 } }).toArray();
    const ids = registered.filter((r) => cleanable(r._id, TEST_TENANT, r.registeredAt, since, run)).map((r) => r._id);
    if (ids.length > 0) report.registrations = (await sweeps.deleteMany({ _id: { $in: ids } })).deletedCount;
    const documents = await deleteRunDocuments(mongo.db(config.mongo.dbName), run, options);
    report.tenants = documents.tenants;
    report.documents = documents.documents;
  } finally {
    await mongo.close();
  }

  // Only mail no run can still be waiting for: a second run on the same stack reads its own as it arrives.
  report.mail = pruneMail(new Date(since.getTime() - STALE_MS));
  return report;
}

/** `uniqueId`'s names in this run: `<prefix>-<run tag><8 hex>`. */
function runNamePattern(run: string): string {
  if (!/^[0-9a-f]{4}$/.test(run)) throw new Error(`not a run tag: "${run}"`);
  return `^[a-z][a-z-]*-${run}[0-9a-f]{8}$`;
}

/** Above this many, a tenant's documents go in chunks of ids (FerretDB makes one statement of a deleteMany). */
const DELETE_CHUNK = 10_000;

/**
 * Deletes every document of this run's tenants, in every collection of the test database (or in `collections`).
 * The tenants are found with one `distinct` per collection, and each tenant's documents are deleted by tenant
 * equality, the filter FerretDB sends to PostgreSQL; never `$in` over tenants. On FerretDB each `distinct` reads
 * the whole collection (seconds for 10⁴–10⁵ documents), which is why the collections are read a few at a time.
 */
export async function deleteRunDocuments(
  db: Db,
  run: string,
  options: { chunk?: number; collections?: string[] } = {},
): Promise<{ tenants: number; documents: number }> {
  const pattern = runNamePattern(run);
  const ours = new RegExp(pattern);
  const names =
    options.collections ??
    (await db.listCollections({}, { nameOnly: true }).toArray())
      .map((c) => c.name)
      .filter((name) => !name.startsWith('system.'));
  const tenants = new Set<string>();
  const counts = await mapBounded(names, 3, async (name) => {
    const collection = db.collection<{ _id: unknown; tenant?: unknown }>(name);
    if ((await collection.estimatedDocumentCount()) === 0) return 0;
    const found = (await collection.distinct('tenant', { tenant: { $regex: pattern } })).filter(
      (tenant): tenant is string => typeof tenant === 'string' && ours.test(tenant),
    );
    for (const tenant of found) tenants.add(tenant);
    const deleted = await mapBounded(found, 4, (tenant) =>
      deleteTenantDocuments(collection, tenant, options.chunk ?? DELETE_CHUNK),
    );
    return deleted.reduce((sum, n) => sum + n, 0);
  });
  return { tenants: tenants.size, documents: counts.reduce((sum, n) => sum + n, 0) };
}

async function deleteTenantDocuments(
  collection: Collection<{ _id: unknown; tenant?: unknown }>,
  tenant: string,
  chunk: number,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const count = await collection.countDocuments({ tenant });
    if (count === 0) return deleted;
    if (count <= chunk) return deleted + (await collection.deleteMany({ tenant })).deletedCount;
    const ids = await collection.find({ tenant }, { projection: { _id: 1 }, limit: chunk }).toArray();
    deleted += (await collection.deleteMany({ tenant, _id: { $in: ids.map((d) => d._id) } })).deletedCount;
  }
}

/** Captured mail from before the run: tests wait for their own messages, never an old one. */
function pruneMail(before: Date): number {
  const dir = loadStackConfig().smtp.captureDir;
  if (!fs.existsSync(dir)) return 0;
  let pruned = 0;
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    const stat = fs.statSync(file);
    if (stat.isFile() && stat.mtime < before) {
      fs.rmSync(file, { force: true });
      pruned++;
    }
  }
  return pruned;
}

function tenantOfIndex(index: string, prefix: string): string {
  // `<prefix>-mem-<tenant>` or a versioned concrete index behind that alias.
  const rest = index.slice(prefix.length);
  const match = /^(t-[0-9a-f]{12})/.exec(rest);
  return match ? match[1]! : rest;
}
