/**
 * How a bench runs (`runBench(main)` at the end of each `bench/*.bench.ts`):
 *
 * - In a process group of its own. The process started by `npm run bench:*` starts the bench again as the leader of a
 *   new group and waits for it; SIGINT or SIGTERM to it is passed to the whole group (after 10 s, SIGKILL), and the
 *   group is killed when it exits, so a stopped bench leaves no inner process (its workers, a dev server, a psql).
 * - Under a run tag claimed in `bench_runs` (the unique `_id` insert is the arbiter): every tenant, task queue and
 *   index a bench names carries it (`benchName`: `bench-<tag>-<label>`). The claim goes only when the bench finished
 *   (it removes its own tenants); at its next start, a bench removes what runs that did not finish left behind —
 *   their tenants' documents in every Lethe database, their indices, their running workflows and schedules.
 */
import { processAlive } from '../../src/shared/process-alive.js';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Client as Elasticsearch } from '@elastic/elasticsearch';
import { Client, Connection } from '@temporalio/client';
import { MongoClient, type Collection } from 'mongodb';
import { loadConfig } from '../../src/config/load-config.js';
import { isDuplicateKey, mapBounded } from '../../src/substrate/mongo/collections.js';

const LEADER_ENV = 'LETHE_BENCH_LEADER';
const RUNS = 'bench_runs';
/** A claim from another host (whose process cannot be looked at) is taken as left behind after this long. */
const FOREIGN_STALE_MS = 48 * 3600_000;
/** How long the group has to stop on SIGINT/SIGTERM before it is killed. */
const GRACE_MS = 10_000;

interface RunClaim {
  _id: string;
  host: string;
  pid: number;
  startedAt: Date;
}

let runTag: string | null = null;

/** A name of this run: `bench-<run tag>-<label>` (a tenant, a task queue, an index). */
export function benchName(label: string): string {
  if (runTag === null) throw new Error('benchName: no bench run (call it from the main passed to runBench)');
  return `bench-${runTag}-${label}`;
}

/** A bench's size or count from the environment: a non-negative integer, `fallback` when unset or empty. */
export const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
};

/** Runs `main` as a bench (see the file's header) and exits: 0 when it finished, 1 when it threw. */
export async function runBench(main: () => Promise<void>): Promise<never> {
  if (process.env[LEADER_ENV] !== '1') return lead();
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const mongo = new MongoClient(config.mongo.uri);
  let code = 1;
  try {
    const runs = mongo.db(config.mongo.dbName).collection<RunClaim>(RUNS);
    runTag = await claim(runs);
    await removeRunsLeftBehind(mongo, config);
    await main();
    await runs.deleteOne({ _id: runTag });
    code = 0;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  } finally {
    await mongo.close().catch(() => undefined);
  }
  process.exit(code);
}

/** Removes what every bench run that did not finish left behind, and its claim (see the file's header). */
export async function removeRunsLeftBehind(mongo: MongoClient, config: ReturnType<typeof loadConfig>): Promise<void> {
  const runs = mongo.db(config.mongo.dbName).collection<RunClaim>(RUNS);
  for (const left of await leftBehind(runs)) {
    const removed = await removeRun(mongo, config, left._id);
    await runs.deleteOne({ _id: left._id });
    process.stderr.write(
      `bench: removed what run ${left._id} (pid ${left.pid}, started ${left.startedAt.toISOString()}) left: ` +
        `${JSON.stringify(removed)}\n`,
    );
  }
}

/** Starts this same script as the leader of a new process group, passes signals to the group, and waits. */
function lead(): Promise<never> {
  const [script, ...args] = process.argv.slice(1);
  const child = spawn(process.execPath, [...process.execArgv, script!, ...args], {
    detached: true,
    stdio: 'inherit',
    env: { ...process.env, [LEADER_ENV]: '1' },
  });
  const group = child.pid;
  if (group === undefined) throw new Error(`could not start ${script}`);
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-group, signal);
    } catch {
      // ESRCH: nothing left in the group.
    }
  };
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    killGroup(signal);
    if (stopping) return;
    stopping = true;
    setTimeout(() => killGroup('SIGKILL'), GRACE_MS).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGHUP', () => stop('SIGTERM'));
  // However this process ends, nothing of the group outlives it.
  process.on('exit', () => killGroup('SIGKILL'));
  return new Promise<never>(() => {
    child.once('exit', (code, signal) => {
      killGroup('SIGKILL');
      process.exit(code ?? (signal === 'SIGINT' ? 130 : 143));
    });
  });
}

async function claim(runs: Collection<RunClaim>): Promise<string> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const tag = randomUUID().slice(0, 4);
    try {
      await runs.insertOne({ _id: tag, host: os.hostname(), pid: process.pid, startedAt: new Date() });
      return tag;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }
  throw new Error(`no free bench run tag after 100 tries: see the ${RUNS} collection`);
}

/** Claims of runs that did not finish: their process is gone (this host), or they are very old (another host). */
async function leftBehind(runs: Collection<RunClaim>): Promise<RunClaim[]> {
  const claims = await runs.find({ _id: { $ne: runTag ?? '' } }).toArray();
  return claims.filter((c) =>
    c.host === os.hostname() ? !processAlive(c.pid) : Date.now() - c.startedAt.getTime() > FOREIGN_STALE_MS,
  );
}

/** Ids per delete: FerretDB sends one SQL parameter per document deleted, and PostgreSQL takes at most 65 535. */
const DELETE_CHUNK = 20_000;

/**
 * Every document of one tenant, by tenant equality (the filter the local server sends to PostgreSQL), in chunks: a
 * killed run of the retention bench leaves 200 000 records, more than one delete can name.
 */
async function deleteTenantDocs(docs: Collection<{ tenant?: unknown }>, tenant: string): Promise<number> {
  let n = 0;
  for (;;) {
    const ids = (
      await docs
        .find({ tenant }, { projection: { _id: 1 } })
        .limit(DELETE_CHUNK)
        .toArray()
    ).map((d) => d._id);
    if (ids.length === 0) return n;
    n += (await docs.deleteMany({ tenant, _id: { $in: ids } })).deletedCount;
  }
}

/** Everything named `bench-<tag>-…`: documents of its tenants in every Lethe database, indices, workflows, schedules. */
async function removeRun(
  mongo: MongoClient,
  config: ReturnType<typeof loadConfig>,
  tag: string,
): Promise<{ documents: number; indices: number; workflows: number; schedules: number }> {
  if (!/^[0-9a-f]{4}$/.test(tag)) throw new Error(`not a bench run tag: "${tag}"`);
  const prefix = `bench-${tag}-`;
  const removed = { documents: 0, indices: 0, workflows: 0, schedules: 0 };

  // Benches write to the main database and to `<main>_<bench>` ones.
  const { databases } = await mongo.db(config.mongo.dbName).admin().listDatabases({ nameOnly: true });
  for (const { name } of databases.filter((d) => d.name.startsWith(config.mongo.dbName))) {
    const db = mongo.db(name);
    const collections = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    const held = await mapBounded(collections, 3, async (collection) => {
      const docs = db.collection<{ tenant?: unknown }>(collection);
      const all = await docs.distinct('tenant');
      return { docs, all, ours: all.filter((t): t is string => typeof t === 'string' && t.startsWith(prefix)) };
    });
    // A bench's own database that holds nothing but this run's tenants goes whole: deleting a killed retention run's
    // 10⁵ records a chunk at a time costs minutes per chunk on the local server.
    const onlyOurs = held.some((h) => h.ours.length > 0) && held.every((h) => h.ours.length === h.all.length);
    if (name !== config.mongo.dbName && onlyOurs) {
      for (const h of held) removed.documents += await h.docs.estimatedDocumentCount();
      await db.dropDatabase();
      continue;
    }
    for (const { docs, ours } of held)
      for (const tenant of ours) removed.documents += await deleteTenantDocs(docs, tenant);
  }

  const es = new Elasticsearch({ node: config.elasticsearch.url });
  try {
    const indices = (await es.cat.indices({ index: `*${prefix}*`, format: 'json', h: ['index'] })).map((i) =>
      String(i.index),
    );
    // Named one by one: deleting by wildcard is refused by default (action.destructive_requires_name).
    for (let at = 0; at < indices.length; at += 50) {
      await es.indices.delete({ index: indices.slice(at, at + 50), ignore_unavailable: true });
    }
    removed.indices = indices.length;
  } finally {
    await es.close();
  }

  const connection = await Connection.connect({ address: config.temporal.address });
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace });
    for await (const execution of client.workflow.list({ query: 'ExecutionStatus = "Running"' })) {
      if (!execution.taskQueue.startsWith(prefix) && !execution.workflowId.includes(prefix)) continue;
      await client.workflow
        .getHandle(execution.workflowId, execution.runId)
        .terminate('bench run left behind')
        .catch(() => undefined);
      removed.workflows++;
    }
    for await (const schedule of client.schedule.list()) {
      if (!schedule.scheduleId.includes(prefix)) continue;
      await client.schedule
        .getHandle(schedule.scheduleId)
        .delete()
        .catch(() => undefined);
      removed.schedules++;
    }
  } finally {
    await connection.close();
  }
  return removed;
}

/**
 * Ends the workflows still running on a bench's task queue (sign-offs and dispute reviews wait for a reviewer:
 * nothing else would end them).
 */
export async function endRunningWorkflows(
  client: Client,
  taskQueue: string,
  bench: string,
  progress: (message: string) => void,
): Promise<void> {
  try {
    for await (const w of client.workflow.list({
      query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
    })) {
      await client.workflow
        .getHandle(w.workflowId, w.runId)
        .terminate(`${bench} finished`)
        .catch(() => undefined);
    }
  } catch (error) {
    progress(`could not end running workflows: ${(error as Error).message}`);
  }
}
