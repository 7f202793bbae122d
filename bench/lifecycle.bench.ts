/**
 * Lifecycle benchmark: `npm run bench:lifecycle`.
 *
 * Section "retention sweep" (this file's retention part):
 *  A. Sweep rate over 10⁵ expired records (BENCH_RETENTION_RECORDS), next to as many records not yet expired: the
 *     `retentionSweep` workflow on a worker of its own, with the erasure hand-off stubbed (the port that files
 *     erasure requests only counts ids) — so it measures marking (`active` → `expired`, one audit entry each) and
 *     the hand-off bookkeeping, not erasure. Also one page of the range query the bucketing replaces.
 *  B. A smaller full run (BENCH_RETENTION_FULL records, default 2 000): the same workflow on a full Lethe worker,
 *     handing off to real erasure requests (back-pressure: at most BENCH_RETENTION_MAX_OPEN, default 1, at work), timed
 *     until every request finished.
 *
 * Each part uses a MongoDB database of its own (dropped at the end, when nothing else runs on it) and its own task
 * queue; part B its own index prefix. Tables go to stdout, progress to stderr.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import {
  DefaultLogger,
  NativeConnection,
  Runtime as TemporalRuntime,
  Worker,
  bundleWorkflowCode,
} from '@temporalio/worker';
import type { Db } from 'mongodb';
import { createRetentionActivities } from '../activities/retention.activities.js';
import { createRuntime, type Runtime } from '../src/app/runtime.js';
import { createServices } from '../src/app/services.js';
import type { Config } from '../src/config/config.js';
import { loadConfig } from '../src/config/load-config.js';
import { createMongoAuditLog } from '../src/governance/audit/mongo-audit-log.js';
import { ERASURE_PENDING, expiryBucketOf } from '../src/governance/retention/expiry-bucket.js';
import { createExpiryQueue } from '../src/governance/retention/expiry-queue.js';
import { createMongoSweepStateStore } from '../src/governance/retention/sweep-state-store.js';
import { sha256Hex } from '../src/substrate/fingerprint.js';
import { createMongoMemoryStore } from '../src/substrate/memories/memory-store.js';
import type { MemoryRecord } from '../src/substrate/model/records.js';
import { Collections } from '../src/substrate/mongo/collections.js';
import { bundlerOptions } from '../src/temporal/bundling.js';
import { bundleWorkflows, createLetheWorker } from '../src/temporal/worker.js';
import type {
  RetentionSweepInput,
  RetentionSweepResult,
  SweepProgress,
} from '../workflows/retention-sweep.workflow.js';
import { num, table } from './lib/stack-report.js';

const RECORDS = Number(process.env.BENCH_RETENTION_RECORDS ?? 100_000);
const FULL = Number(process.env.BENCH_RETENTION_FULL ?? 2000);
const PAGE = 1000;
const FULL_PAGE = 500;
const MAX_OPEN = Number(process.env.BENCH_RETENTION_MAX_OPEN ?? 1);
const SKIP_A = process.env.BENCH_RETENTION_SKIP_A === '1';
const HOUR = 3600_000;
const INDEX_SETTINGS = { 'index.soft_deletes.retention_lease.sync_interval': '1s' };

const progress = (message: string) => process.stderr.write(`bench:lifecycle: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const seconds = (ms: number) => num(ms / 1000);
const perSecond = (n: number, ms: number) => num((n / ms) * 1000);
const count = (n: number) => n.toLocaleString('en-US');

function withDatabase(base: Config, name: string, extra: Record<string, string> = {}): Config {
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_${name}`;
  return loadConfig({ ...process.env, LOG_LEVEL: 'warn', MONGODB_URI: uri.toString(), ...extra });
}

/** A memory record as admission stores it, with its expiry and bucket set. */
function record(tenant: string, i: number, expiresAt: Date): MemoryRecord & { expiryBucket: string } {
  const content = `Bench memory ${i}: the customer prefers contact by e-mail in the morning (${randomUUID()}).`;
  const at = new Date(expiresAt.getTime() - 365 * 24 * HOUR);
  return {
    _id: `mem_${randomUUID()}`,
    tenant,
    namespace: 'support',
    subjects: [`subject-${i % 997}`],
    kind: 'preference',
    attribute: 'contact-channel',
    content,
    contentHash: sha256Hex(content),
    validFrom: at,
    validTo: null,
    recordedAt: at,
    policy: {
      purpose: 'customer-support',
      sensitivity: 'internal',
      jurisdiction: 'PT',
      retentionClass: 'agent-memories',
    },
    provenance: { eventIds: [], parentIds: [], derivationRule: 'bench', modelVersion: null, promptVersion: null },
    trustTier: 1,
    confidence: 0.9,
    version: 1,
    status: 'active',
    writtenBy: 'bench',
    expiresAt,
    expiryBucket: expiryBucketOf(expiresAt),
    highImpact: false,
    statusReason: null,
    updatedAt: at,
  };
}

/** `count` records expired 1–20 hours ago (spread over the hours, within the first sweep's look-back) and `future` expiring within a year. */
function dataset(tenant: string, count: number, future: number) {
  const now = Date.now();
  const expired = Array.from({ length: count }, (_, i) =>
    record(tenant, i, new Date(now - (1 + (i % 20)) * HOUR - 60_000)),
  );
  const later = Array.from({ length: future }, (_, i) =>
    record(tenant, count + i, new Date(now + (2 + (i % 8000)) * HOUR)),
  );
  return { expired, later };
}

async function insertAll(db: Db, docs: readonly MemoryRecord[]): Promise<number> {
  const started = performance.now();
  const memories = db.collection<MemoryRecord>(Collections.memories);
  for (let i = 0; i < docs.length; i += 5000) await memories.insertMany(docs.slice(i, i + 5000), { ordered: false });
  return performance.now() - started;
}

/** Runs the sweep and notes when the mark phase ended (polling the workflow's progress query). */
async function runSweep(client: Client, taskQueue: string, input: RetentionSweepInput) {
  const workflowId = `bench-retention-${input.tenant}`;
  const started = performance.now();
  const handle = await client.workflow.start('retentionSweep', { taskQueue, workflowId, args: [input] });
  let markMs = NaN;
  const result = handle.result() as Promise<RetentionSweepResult>;
  let done = false;
  void result.finally(() => (done = true)).catch(() => undefined);
  while (!done && Number.isNaN(markMs)) {
    await new Promise((r) => setTimeout(r, 250));
    const p = (await client.workflow
      .getHandle(workflowId)
      .query<SweepProgress | null>('retentionProgress')
      .catch(() => null)) as SweepProgress | null;
    if (p?.phase === 'handoff') markMs = performance.now() - started;
  }
  const value = await result;
  const totalMs = performance.now() - started;
  if (Number.isNaN(markMs)) markMs = totalMs;
  const runs: { runId: string; historyLength: number }[] = [];
  for await (const w of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runs.push({ runId: w.runId, historyLength: w.historyLength });
  }
  return { value, totalMs, markMs, workflowId, runs };
}

// ── Section: retention sweep ────────────────────────────────────────────────────────────────────────────────────

async function retentionPartA(base: Config, connection: NativeConnection): Promise<void> {
  const config = withDatabase(base, 'bench_retention_a');
  const runtime = createRuntime(config, 'lethe-bench');
  const tenant = `bench-ret-a-${randomUUID().slice(0, 6)}`;
  const taskQueue = `bench-retention-a-${randomUUID().slice(0, 6)}`;
  try {
    const db = runtime.db;
    await createMongoMemoryStore(db).ensureIndexes();
    const queue = createExpiryQueue(db);
    await queue.ensureIndexes();
    const audit = createMongoAuditLog(db);
    await audit.ensureIndexes();
    const { expired, later } = dataset(tenant, RECORDS, RECORDS);
    progress(`A: inserting ${RECORDS} expired + ${RECORDS} not yet expired records (load ${load()})`);
    const insertMs = await insertAll(db, [...expired, ...later]);
    progress(`A: inserted in ${seconds(insertMs)} s`);

    // What the bucketing replaces: one page of a range query on expiresAt (a scan of the tenant on FerretDB).
    const memories = db.collection<MemoryRecord>(Collections.memories);
    const rangeStart = performance.now();
    await memories
      .find({ tenant, status: 'active', expiresAt: { $lte: new Date() } }, { projection: { _id: 1 } })
      .sort({ expiresAt: 1 })
      .limit(PAGE)
      .toArray();
    const rangeMs = performance.now() - rangeStart;
    const bucketStart = performance.now();
    const page = await queue.take(tenant, expiryBucketOf(expired[0]!.expiresAt!), PAGE);
    const bucketMs = performance.now() - bucketStart;
    progress(`A: one range page ${num(rangeMs)} ms, one bucket page (${page.length}) ${num(bucketMs)} ms`);

    let filed = 0;
    let filings = 0;
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: path.resolve(import.meta.dirname, '..', 'workflows', 'retention-sweep.workflow.ts'),
        ...bundlerOptions,
        logger: new DefaultLogger('WARN'),
      }),
      activities: createRetentionActivities({
        queue,
        sweeps: createMongoSweepStateStore(db),
        audit,
        // Stub: erasure filing is off in this part; it only counts what would be handed off.
        erasures: {
          file: async (_tenant, ids) => ({ requestId: `stub-${++filings}-${(filed += ids.length)}` }),
          open: async () => 0,
        },
      }),
    });
    const client = new Client({ connection: runtime.temporal, namespace: config.temporal.namespace });
    progress(`A: sweeping (load ${load()})`);
    const run = await worker.runUntil(runSweep(client, taskQueue, { tenant, pageSize: PAGE }));
    const handOffMs = run.totalMs - run.markMs;
    const [expiredNow, activeNow, pendingLeft] = await Promise.all([
      memories.countDocuments({ tenant, status: 'expired' }),
      memories.countDocuments({ tenant, status: 'active' }),
      queue.take(tenant, ERASURE_PENDING, 1),
    ]);
    const auditEntries = (await audit.head(tenant))?.seq ?? 0;

    out(`### Retention sweep A — ${count(RECORDS)} expired records (erasure filing stubbed OFF)`);
    out();
    out(
      `${count(RECORDS)} expired records (20 hour buckets, 1–20 h old) + ${count(RECORDS)} not yet expired, in one tenant; ` +
        `pages of ${PAGE}; the port that files erasure requests is a stub that counts ids (no erasure runs).`,
    );
    out();
    out(
      table(
        ['measure', 'value'],
        [
          ['insert 2·N records (s)', seconds(insertMs)],
          [`one page of {expiresAt ≤ now} sorted, limit ${PAGE} (ms)`, num(rangeMs)],
          [`one page of {tenant, expiryBucket} equality, limit ${PAGE} (ms)`, num(bucketMs)],
          ['mark phase: active → expired + audit + queue (s)', seconds(run.markMs)],
          ['mark rate (records/s)', perSecond(run.value.expired, run.markMs)],
          ['hand-off phase: filing (stub) + leave queue (s)', seconds(handOffMs)],
          ['hand-off rate (records/s)', perSecond(run.value.handedOff, handOffMs)],
          ['whole sweep (s)', seconds(run.totalMs)],
          ['sweep rate, mark + hand-off (records/s)', perSecond(RECORDS, run.totalMs)],
          [
            'records expired / handed off / erasure requests',
            `${run.value.expired} / ${run.value.handedOff} / ${filings}`,
          ],
          ['stub received ids', String(filed)],
          [
            'workflow runs (continue-as-new) / longest history (events)',
            `${run.runs.length} / ${Math.max(...run.runs.map((r) => r.historyLength))}`,
          ],
          ['check: expired / still active / left in queue', `${expiredNow} / ${activeNow} / ${pendingLeft.length}`],
          ['audit entries in the tenant chain', String(auditEntries)],
        ],
      ),
    );
    out();
    if (expiredNow !== RECORDS || activeNow !== RECORDS || pendingLeft.length !== 0)
      throw new Error('part A: the sweep left records behind');
  } finally {
    await runtime.db.dropDatabase().catch((error: unknown) => progress(`A: drop failed: ${(error as Error).message}`));
    await runtime.close();
  }
}

async function retentionPartB(
  base: Config,
  connection: NativeConnection,
  workflowBundle: { code: string },
): Promise<void> {
  const config = withDatabase(base, 'bench_retention_b', { LETHE_INDEX_PREFIX: 'lethe-bench-ret' });
  const runtime: Runtime = createRuntime(config, 'lethe-bench');
  const tenant = `bench-ret-b-${randomUUID().slice(0, 6)}`;
  const taskQueue = `bench-retention-b-${randomUUID().slice(0, 6)}`;
  const services = createServices(runtime, { taskQueue, indexSettings: INDEX_SETTINGS });
  try {
    await services.ensureIndexes();
    await createExpiryQueue(runtime.db).ensureIndexes();
    const { expired, later } = dataset(tenant, FULL, Math.round(FULL / 10));
    progress(`B: inserting ${FULL} expired + ${later.length} later records and indexing them`);
    await insertAll(runtime.db, [...expired, ...later]);
    const all = [...expired, ...later];
    for (let i = 0; i < all.length; i += 500) {
      await services.index.upsert(tenant, all.slice(i, i + 500), {
        refresh: i + 500 >= all.length ? 'wait_for' : false,
      });
    }
    const worker = await createLetheWorker(runtime, { taskQueue, services, connection, workflowBundle });
    const client = services.temporalClient;
    progress(`B: sweeping with real erasure (load ${load()})`);
    const e2e = await worker.runUntil(async () => {
      const started = performance.now();
      const run = await runSweep(client, taskQueue, {
        tenant,
        pageSize: FULL_PAGE,
        maxOpenErasures: MAX_OPEN,
        pollEvery: '5 seconds',
      });
      const requests = runtime.db.collection<{
        _id: string;
        tenant: string;
        state: string;
        operatorNote: string | null;
      }>(Collections.erasures);
      for (;;) {
        const states = await requests.find({ tenant }, { projection: { state: 1 } }).toArray();
        if (
          states.length > 0 &&
          states.every((r) => r.state === 'completed' || r.state === 'needs-operator' || r.state === 'rejected')
        )
          break;
        if (performance.now() - started > 30 * 60_000) throw new Error('part B: erasures did not finish in 30 minutes');
        await new Promise((r) => setTimeout(r, 1000));
      }
      return { run, ms: performance.now() - started, requests: await requests.find({ tenant }).toArray() };
    });
    const memories = runtime.db.collection<MemoryRecord>(Collections.memories);
    const [left, untouched] = await Promise.all([
      memories.countDocuments({ tenant, status: { $ne: 'active' } }),
      memories.countDocuments({ tenant, status: 'active' }),
    ]);
    const certificates = await runtime.db
      .collection<{ tenant: string; legalGround: string }>(Collections.certificates)
      .find({ tenant })
      .toArray();
    const completed = e2e.requests.filter((r) => r.state === 'completed').length;

    out(`### Retention sweep B — ${count(FULL)} expired records, full run including erasure`);
    out();
    out(
      `${count(FULL)} expired + ${count(later.length)} later records (MongoDB + Elasticsearch); pages of ${FULL_PAGE} → one erasure ` +
        `request each, at most ${MAX_OPEN} at work at once. Indices use index.soft_deletes.retention_lease.sync_interval=1s ` +
        `(test-only; production's 30 s default adds up to ~30 s per erasure).`,
    );
    out();
    out(
      table(
        ['measure', 'value'],
        [
          ['sweep workflow, mark phase (s)', seconds(e2e.run.markMs)],
          ['sweep workflow, whole (hand-off waits on back-pressure) (s)', seconds(e2e.run.totalMs)],
          ['sweep start → every erasure completed (s)', seconds(e2e.ms)],
          ['end-to-end rate (records/s)', perSecond(FULL, e2e.ms)],
          ['erasure requests completed / filed', `${completed} / ${e2e.requests.length}`],
          ...e2e.requests
            .filter((r) => r.state !== 'completed')
            .map((r) => [`  not completed: ${r._id}`, `${r.state} (${r.operatorNote ?? '-'})`]),
          [
            'certificates (all retention-expiry)',
            `${certificates.length} (${certificates.every((c) => c.legalGround === 'retention-expiry')})`,
          ],
          ['check: expired records left / later records untouched', `${left} / ${untouched}`],
        ],
      ),
    );
    out();
  } finally {
    await services.index.dropTenant(tenant).catch(() => undefined);
    await runtime.db.dropDatabase().catch((error: unknown) => progress(`B: drop failed: ${(error as Error).message}`));
    await runtime.close();
  }
}

async function retentionSection(): Promise<void> {
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const connection = await NativeConnection.connect({ address: base.temporal.address });
  try {
    out(`## Retention sweep — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${load()}`);
    out(`MongoDB ${base.mongo.uri} · Temporal ${base.temporal.address} · Elasticsearch ${base.elasticsearch.url}`);
    out();
    if (SKIP_A) out('(part A skipped: BENCH_RETENTION_SKIP_A=1)');
    else await retentionPartA(base, connection);
    progress('B: bundling the Lethe workflows');
    const bundle = await bundleWorkflows();
    await retentionPartB(base, connection, bundle);
    out(`(load at the end: ${load()})`);
  } finally {
    await connection.close();
  }
}

// ── Main ──────────────────────────────────────────────────────────────────────────────────────────────────────

TemporalRuntime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
await retentionSection();
// Stray handles (pools, timers) must not keep the process alive.
process.exit(0);
