/**
 * Lifecycle benchmark: `npm run bench:lifecycle`.
 *
 * Section "admission" (runs first; BENCH_ADMIT_SKIP=1 skips it):
 *  (A third path, the same workflow over stores that do not seal content, on a worker and tenant of its own, gives
 *  the cost of sealing at rest: the three take turns going first.)
 *  BENCH_ADMIT_BATCHES (default 4) batches of BENCH_ADMIT_SIZE (default 250) low-impact preferences, each with the
 *  event it was learned from and which states it (the derivation audit, in `enforce` mode, finds each supported),
 *  written two ways, alternating batch by batch so that load from elsewhere falls on both:
 *  - workflow: the write gateway the API uses (stage the batch with the writer's roles, run `ingestBatch` on a full
 *    Lethe worker): write policy, tombstone and lineage checks, retention expiry, events, lineage, memories, audit,
 *    contradiction detection (`detectContradictions`, before indexing), index with refresh=wait_for, discard stage;
 *  - direct: `insertMany` of the same event and memory documents (status, `expiresAt`, `expiryBucket` and retention
 *    class from the same policies) plus the same index adapter's `_bulk` with refresh=wait_for.
 *  Every memory is about a subject of its own, so none contradicts another (the lookups run, no dispute opens). The
 *  workflow path's time is split by activity from the workflows' histories.
 *
 * Section "retention sweep" (BENCH_RETENTION_SKIP=1 skips it):
 *  A. Sweep rate over 10⁵ expired records (BENCH_RETENTION_RECORDS), next to as many records not yet expired: the
 *     `retentionSweep` workflow on a worker of its own, with the erasure hand-off stubbed (the port that files
 *     erasure requests only counts ids) — so it measures marking (`active` → `expired`, one audit entry each) and
 *     the hand-off bookkeeping, not erasure. Also one page of the range query the bucketing replaces beside one
 *     page of the bucket query the sweep reads by: each run BENCH_LIFECYCLE_QUERY_REPEATS times (default 5) with the
 *     same clauses, warm (one untimed run of each first), alternating (the one that goes first alternates too);
 *     min and median of each and the ratio of the medians. BENCH_RETENTION_SKIP_A=1 skips it.
 *  B. A smaller full run (BENCH_RETENTION_FULL records, default 2 000): the same workflow on a full Lethe worker,
 *     handing off to real erasure requests (back-pressure: at most BENCH_RETENTION_MAX_OPEN, default 1, at work), timed
 *     until every request finished.
 *
 * Each part uses a MongoDB database of its own (dropped at the end, when nothing else runs on it) and its own task
 * queue; admission and part B their own index prefixes. Tables go to stdout, progress to stderr.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import {
  DefaultLogger,
  NativeConnection,
  Runtime as TemporalRuntime,
  Worker,
  bundleWorkflowCode,
} from '@temporalio/worker';
import type { Collection, Db } from 'mongodb';
import { createRetentionActivities } from '../activities/retention.activities.js';
import { createRuntime, type Runtime } from '../app/runtime.js';
import { createServices } from '../app/services.js';
import type { Config } from '../src/config/config.js';
import { loadConfig } from '../src/config/load-config.js';
import { createMongoAuditLog } from '../src/governance/audit/mongo-audit-log.js';
import { ERASURE_PENDING, expiryBucketOf } from '../src/governance/retention/expiry-bucket.js';
import { createExpiryQueue } from '../src/governance/retention/expiry-queue.js';
import { createMongoSweepStateStore } from '../src/governance/retention/sweep-state-store.js';
import { sha256Hex } from '../src/shared/sha256.js';
import { createMongoMemoryStore } from '../src/substrate/memories/memory-store.js';
import type { EventRecord, MemoryRecord } from '../src/substrate/model/records.js';
import { Collections, mapBounded, ownRow } from '../src/substrate/mongo/collections.js';
import { bundlerOptions } from '../app/worker/bundling.js';
import { bundleWorkflows, createLetheWorker } from '../app/worker/worker.js';
import { timedCipher, unsealedRuntime } from './lib/unsealed.js';
import type { RetentionSweepResult } from '../src/temporal/contracts/retention-sweep.contract.js';
import type { SweepProgress } from '../src/temporal/contracts/retention-sweep.contract.js';
import type { RetentionSweepInput } from '../src/temporal/contracts/retention-sweep.contract.js';
import {
  activityTimings,
  admissionBatch,
  ATTRIBUTES,
  directDocuments,
  type ActivityTimings,
  activityDurations,
} from './lib/lifecycle-admission.js';
import { median, num, ratio, table } from './lib/stack-report.js';
import { benchName, runBench } from './lib/bench-run.js';

const RECORDS = Number(process.env.BENCH_RETENTION_RECORDS ?? 100_000);
const FULL = Number(process.env.BENCH_RETENTION_FULL ?? 2000);
const PAGE = 1000;
const FULL_PAGE = 500;
const MAX_OPEN = Number(process.env.BENCH_RETENTION_MAX_OPEN ?? 1);
const SKIP_A = process.env.BENCH_RETENTION_SKIP_A === '1';
const ADMIT_BATCHES = Number(process.env.BENCH_ADMIT_BATCHES ?? 4);
const ADMIT_SIZE = Number(process.env.BENCH_ADMIT_SIZE ?? 250);
const SKIP_ADMIT = process.env.BENCH_ADMIT_SKIP === '1';
const SKIP_RETENTION = process.env.BENCH_RETENTION_SKIP === '1';
const QUERY_REPEATS = ((n) => (Number.isInteger(n) && n >= 1 ? n : 5))(
  Number(process.env.BENCH_LIFECYCLE_QUERY_REPEATS ?? 5),
);
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
  // The derivation audit runs in the mode users run (`enforce`, the default, unless LETHE_DERIVATION_AUDIT says
  // otherwise): each memory cites the event that states it, so every one is found supported and admitted.
  return loadConfig({
    ...process.env,
    LOG_LEVEL: 'warn',
    MONGODB_URI: uri.toString(),
    ...extra,
  });
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
  let reported = started;
  // Every 250 ms until the mark phase ends (its end is timed), then every 5 s for the progress line only.
  while (!done) {
    await new Promise((r) => setTimeout(r, Number.isNaN(markMs) ? 250 : 5000));
    const p = (await client.workflow
      .getHandle(workflowId)
      .query<SweepProgress | null>('retentionProgress')
      .catch(() => null)) as SweepProgress | null;
    if (p?.phase === 'handoff' && Number.isNaN(markMs)) markMs = performance.now() - started;
    if (p && performance.now() - reported >= 30_000) {
      reported = performance.now();
      const elapsed = reported - started;
      progress(
        `  sweep ${input.tenant}: ${p.phase}, bucket ${p.bucket}, expired ${p.totals.expired}, handed off ` +
          `${p.totals.handedOff} after ${seconds(elapsed)} s (load ${load()})`,
      );
    }
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

// ── Section: admission ──────────────────────────────────────────────────────────────────────────────────────────

/** The activities of `ingestBatch`, in the order it runs them. */
const INGEST_ACTIVITIES = ['admitStagedBatch', 'detectContradictions', 'indexMemories', 'discardStage'] as const;

async function admissionSection(
  base: Config,
  connection: NativeConnection,
  workflowBundle: { code: string },
): Promise<void> {
  const config = withDatabase(base, 'bench_lifecycle_admit', { LETHE_INDEX_PREFIX: 'lethe-bench-adm' });
  const created: Runtime = createRuntime(config, 'lethe-bench');
  // The sealed path's cipher is timed call by call: its share of the path's time, beside the two paths' ratio.
  const sealing = timedCipher(created.cipher);
  const runtime: Runtime = { ...created, cipher: sealing.cipher };
  const suffix = randomUUID().slice(0, 6);
  const tenant = benchName(`adm-wf-${suffix}`);
  const directTenant = benchName(`adm-direct-${suffix}`);
  const taskQueue = benchName(`admission-${suffix}`);
  const plainTenant = benchName(`adm-unsealed-${suffix}`);
  const plainQueue = benchName(`admission-unsealed-${suffix}`);
  const services = createServices(runtime, { taskQueue, indexSettings: INDEX_SETTINGS });
  const writer = 'bench-agent';
  try {
    await services.ensureIndexes();
    // The retention queue's index, which the records admission writes (with their expiry bucket) land in.
    await createExpiryQueue(runtime.db, runtime.cipher).ensureIndexes();
    const worker = await createLetheWorker(runtime, { taskQueue, services, connection, workflowBundle });
    // The same path over stores that do not seal content: the baseline of sealing, on a queue and tenant of its own.
    const plainRuntime = unsealedRuntime(runtime);
    const plainServices = createServices(plainRuntime, { taskQueue: plainQueue, indexSettings: INDEX_SETTINGS });
    const plainWorker = await createLetheWorker(plainRuntime, {
      taskQueue: plainQueue,
      services: plainServices,
      connection,
      workflowBundle,
    });
    const eventsCollection = runtime.db.collection<EventRecord>(Collections.events);
    const memoriesCollection = runtime.db.collection<MemoryRecord>(Collections.memories);
    const policies = { impact: services.rules.impact, retention: services.rules.retention };

    const admitThrough = async (
      via: typeof services,
      into: string,
      batch: ReturnType<typeof admissionBatch>,
    ): Promise<void> => {
      const result = await via.workflows.writes.submit({ id: writer, tenant: into, roles: ['agent'] }, batch);
      if (result.refused)
        throw new Error(`admission refused the batch: ${result.refused.type} at ${result.refused.field}`);
      const notActive = result.memories.filter((m) => m.status !== 'active').length;
      if (notActive > 0 || result.disputes.length > 0 || result.reviews.length > 0)
        throw new Error(
          `admission: ${notActive} memories not active, ${result.disputes.length} disputes, ${result.reviews.length} reviews`,
        );
      if (result.indexed !== batch.memories.length)
        throw new Error(`admission indexed ${result.indexed} of ${batch.memories.length}`);
    };
    const direct = async (batch: ReturnType<typeof admissionBatch>): Promise<void> => {
      const docs = directDocuments(services.tenantMacs, directTenant, writer, batch, policies);
      await eventsCollection.insertMany(docs.events, { ordered: false });
      await memoriesCollection.insertMany(docs.memories, { ordered: false });
      const { indexed, failed } = await services.index.upsert(directTenant, docs.memories, { refresh: 'wait_for' });
      if (indexed !== docs.memories.length || failed.length > 0)
        throw new Error(`direct: indexed ${indexed} of ${docs.memories.length}`);
    };

    const viaWorkflow = (batch: ReturnType<typeof admissionBatch>) => admitThrough(services, tenant, batch);
    const viaUnsealed = (batch: ReturnType<typeof admissionBatch>) => admitThrough(plainServices, plainTenant, batch);

    const plainRunning = plainWorker.run();
    const timings = await worker.runUntil(async () => {
      // Warm-up: bundles, connections, the tenants' indices.
      const warm = admissionBatch(ADMIT_BATCHES + 1, 20);
      await viaWorkflow(warm);
      await viaUnsealed(warm);
      for (const name of Object.keys(sealing.spentMs)) delete sealing.spentMs[name];
      await direct(admissionBatch(ADMIT_BATCHES + 2, 20));
      progress(`admission: ${ADMIT_BATCHES} batches of ${ADMIT_SIZE} events + ${ADMIT_SIZE} memories (load ${load()})`);
      const workflowMs: number[] = [];
      const unsealedMs: number[] = [];
      const directMs: number[] = [];
      for (let b = 0; b < ADMIT_BATCHES; b++) {
        const batch = admissionBatch(b, ADMIT_SIZE);
        const runWorkflow = async () => {
          const started = performance.now();
          await viaWorkflow(batch);
          workflowMs.push(performance.now() - started);
        };
        const runDirect = async () => {
          const started = performance.now();
          await direct(batch);
          directMs.push(performance.now() - started);
        };
        const runUnsealed = async () => {
          const started = performance.now();
          await viaUnsealed(batch);
          unsealedMs.push(performance.now() - started);
        };
        // Rotating which goes first, so that none always follows another's refresh.
        const order = [runWorkflow, runUnsealed, runDirect];
        for (let i = 0; i < order.length; i++) await order[(b + i) % order.length]!();
        progress(
          `admission: batch ${b + 1}/${ADMIT_BATCHES}: workflow ${num(workflowMs.at(-1)! / 1000)} s, not sealed ${num(unsealedMs.at(-1)! / 1000)} s, direct ${num(directMs.at(-1)! / 1000)} s (load ${load()})`,
        );
      }
      return { workflowMs, unsealedMs, directMs };
    });
    plainWorker.shutdown();
    await plainRunning;

    // Per-activity time, from the histories of the measured workflows (the warm-up one left out).
    const client = services.temporalClient;
    const histories: ActivityTimings[] = [];
    const expected = ADMIT_BATCHES + 1;
    let listed: { workflowId: string; startTime: Date }[] = [];
    for (let attempt = 0; attempt < 20 && listed.length < expected; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 500));
      listed = [];
      for await (const w of client.workflow.list({
        query: `LetheTenant = '${tenant}' AND LetheWorkflowKind = 'ingest'`,
      }))
        listed.push({ workflowId: w.workflowId, startTime: w.startTime });
    }
    listed.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    for (const w of listed.slice(1)) histories.push(await activityTimings(client.workflow.getHandle(w.workflowId)));

    const memories = ADMIT_BATCHES * ADMIT_SIZE;
    const workflowTotal = timings.workflowMs.reduce((a, b) => a + b, 0);
    const directTotal = timings.directMs.reduce((a, b) => a + b, 0);
    const workflowRate = (memories / workflowTotal) * 1000;
    const unsealedTotal = timings.unsealedMs.reduce((a, b) => a + b, 0);
    const unsealedRate = (memories / unsealedTotal) * 1000;
    const directRate = (memories / directTotal) * 1000;
    const activityMs = (type: string) => histories.reduce((sum, h) => sum + (h.byType.get(type) ?? 0), 0);
    const serverMs = histories.reduce((sum, h) => sum + h.workflowMs, 0);
    const inActivities = INGEST_ACTIVITIES.reduce((sum, type) => sum + activityMs(type), 0);
    const [stored, active, expiring, disputes, auditHead] = await Promise.all([
      memoriesCollection.countDocuments({ tenant }),
      memoriesCollection.countDocuments({ tenant, status: 'active' }),
      memoriesCollection.countDocuments({ tenant, expiryBucket: { $type: 'string' } }),
      runtime.db.collection(Collections.disputes).countDocuments({ tenant }),
      services.audit.head(tenant),
    ]);

    out(`### Admission — low-impact writes, ingestion workflow vs direct insert`);
    out();
    out(
      `${ADMIT_BATCHES} batches of ${ADMIT_SIZE} preferences (${ATTRIBUTES.length} attributes, one subject each, no ` +
        `contradictions) + ${ADMIT_SIZE} events, alternating workflow and direct batch by batch after a warm-up batch.`,
    );
    out();
    out(
      table(
        ['measure', 'workflow', 'direct', 'workflow / direct'],
        [
          ['memories/s (each with its event)', num(workflowRate), num(directRate), ratio(workflowRate / directRate)],
          [
            'records/s (events + memories)',
            num(workflowRate * 2),
            num(directRate * 2),
            ratio(workflowRate / directRate),
          ],
          [
            `per batch of ${ADMIT_SIZE} p50 (s)`,
            seconds(median(timings.workflowMs)),
            seconds(median(timings.directMs)),
            ratio(median(timings.workflowMs) / median(timings.directMs)),
          ],
          ['total (s)', seconds(workflowTotal), seconds(directTotal), ratio(workflowTotal / directTotal)],
        ],
      ),
    );
    out();
    out('Sealing: the same workflow path, with content sealed at rest and without (same batches, rotating order):');
    out();
    out(
      table(
        ['measure', 'sealed', 'not sealed', 'sealed / not sealed'],
        [
          [
            'memories/s (each with its event)',
            num(workflowRate),
            num(unsealedRate),
            ratio(workflowRate / unsealedRate),
          ],
          [
            `per batch of ${ADMIT_SIZE} p50 (s)`,
            seconds(median(timings.workflowMs)),
            seconds(median(timings.unsealedMs)),
            ratio(median(timings.unsealedMs) / median(timings.workflowMs)),
          ],
        ],
      ),
    );
    const inCipher = Object.values(sealing.spentMs).reduce((a, b) => a + b, 0);
    out(
      `Time inside the cipher on the sealed path (seal, open, key reads and inserts, shred), summed over its calls: ` +
        `${seconds(inCipher)} s of ${seconds(workflowTotal)} s (${num((inCipher / workflowTotal) * 100)} %; calls overlap, ` +
        `so this is an upper bound): ${Object.entries(sealing.spentMs)
          .map(([name, ms]) => `${name} ${seconds(ms)} s`)
          .join(', ')}.`,
    );
    out();
    out('Workflow path, where the time goes (summed over the measured batches, from the workflow histories):');
    out();
    out(
      table(
        ['part', 's', 'share of client-observed time', 'per memory (ms)'],
        [
          ...INGEST_ACTIVITIES.map((type) => [
            `activity ${type} (scheduled → completed)`,
            seconds(activityMs(type)),
            `${num((activityMs(type) / workflowTotal) * 100)} %`,
            num(activityMs(type) / memories),
          ]),
          [
            'workflow tasks and dispatch between activities',
            seconds(serverMs - inActivities),
            `${num(((serverMs - inActivities) / workflowTotal) * 100)} %`,
            num((serverMs - inActivities) / memories),
          ],
          [
            'client: stage the batch, start, await the result',
            seconds(workflowTotal - serverMs),
            `${num(((workflowTotal - serverMs) / workflowTotal) * 100)} %`,
            num((workflowTotal - serverMs) / memories),
          ],
        ],
      ),
    );
    out();
    out(
      `check: workflows measured ${histories.length}/${ADMIT_BATCHES}; activity retries ${histories.reduce((n, h) => n + h.retries, 0)}, ` +
        `failures ${histories.reduce((n, h) => n + h.failures, 0)}; memories stored ${stored} (active ${active}, with an expiry bucket ` +
        `${expiring}); disputes ${disputes}; audit entries ${auditHead?.seq ?? 0}`,
    );
    out();
  } finally {
    // A failed run may leave workflows it started (e.g. dispute reviews) with no worker left to run them.
    try {
      for await (const w of services.temporalClient.workflow.list({
        query: `(TaskQueue = '${taskQueue}' OR TaskQueue = '${plainQueue}') AND ExecutionStatus = 'Running'`,
      })) {
        progress(`admission: terminating ${w.workflowId}, left running`);
        await services.temporalClient.workflow.getHandle(w.workflowId, w.runId).terminate('bench:lifecycle finished');
      }
    } catch (error) {
      progress(`admission: could not clean up running workflows: ${(error as Error).message}`);
    }
    await Promise.allSettled([tenant, directTenant, plainTenant].map((dropped) => services.index.dropTenant(dropped)));
    await runtime.db
      .dropDatabase()
      .catch((error: unknown) => progress(`admission: drop failed: ${(error as Error).message}`));
    await runtime.close();
  }
}

/** Writes in flight for the floor: as many as a guarded move's `applyMove` keeps in flight. */
const FLOOR_IN_FLIGHT = 32;

/**
 * What any marking must pay per record on this server, measured beside the sweep on records it does not touch:
 * one update by `_id` (the move) and one lookup by `_id` (the read after it that a server without atomic updates
 * needs), each by the row filter the stores use (`ownRow`). The local server cannot batch either (no `$in` pushdown; bulk updates wedge it), so the mark rate is
 * bounded by this floor whatever the code does.
 */
async function perRecordFloor(memories: Collection<MemoryRecord>, tenant: string, records: readonly MemoryRecord[]) {
  const writesStarted = performance.now();
  await mapBounded(records, FLOOR_IN_FLIGHT, (r) =>
    memories.updateOne(
      { ...ownRow<MemoryRecord>(tenant, r._id), version: r.version },
      { $set: { updatedAt: new Date() } },
    ),
  );
  const writesMs = performance.now() - writesStarted;
  const readsStarted = performance.now();
  await mapBounded(records, FLOOR_IN_FLIGHT, (r) =>
    memories.findOne(ownRow<MemoryRecord>(tenant, r._id), { projection: { version: 1, status: 1 } }),
  );
  const readsMs = performance.now() - readsStarted;
  return {
    writesPerSecond: (records.length / writesMs) * 1000,
    movesPerSecond: (records.length / (writesMs + readsMs)) * 1000,
  };
}

// ── Section: retention sweep ────────────────────────────────────────────────────────────────────────────────────

async function retentionPartA(base: Config, connection: NativeConnection): Promise<void> {
  const config = withDatabase(base, 'bench_retention_a');
  const runtime = createRuntime(config, 'lethe-bench');
  const tenant = benchName(`ret-a-${randomUUID().slice(0, 6)}`);
  const taskQueue = benchName(`retention-a-${randomUUID().slice(0, 6)}`);
  try {
    const db = runtime.db;
    await createMongoMemoryStore(db, runtime.cipher).ensureIndexes();
    const queue = createExpiryQueue(db, runtime.cipher);
    await queue.ensureIndexes();
    const audit = createMongoAuditLog(db);
    await audit.ensureIndexes();
    const { expired, later } = dataset(tenant, RECORDS, RECORDS);
    progress(`A: inserting ${RECORDS} expired + ${RECORDS} not yet expired records (load ${load()})`);
    const insertMs = await insertAll(db, [...expired, ...later]);
    progress(`A: inserted in ${seconds(insertMs)} s`);

    // What the bucketing replaces: one page of a range query on expiresAt (a scan of the tenant on FerretDB), beside
    // one page of the bucket the sweep reads by. The same clauses every time (one `now`, one bucket), one untimed
    // warm-up of each, then QUERY_REPEATS timed runs of each, alternating, the one that goes first alternating too.
    const memories = db.collection<MemoryRecord>(Collections.memories);
    const now = new Date();
    const bucket = expiryBucketOf(expired[0]!.expiresAt!);
    const queries = {
      range: async () =>
        (
          await memories
            .find({ tenant, status: 'active', expiresAt: { $lte: now } }, { projection: { _id: 1 } })
            .sort({ expiresAt: 1 })
            .limit(PAGE)
            .toArray()
        ).length,
      bucket: async () => (await queue.take(tenant, bucket, PAGE)).length,
    };
    const rangeFound = await queries.range();
    const bucketFound = await queries.bucket();
    const rangeRuns: number[] = [];
    const bucketRuns: number[] = [];
    for (let i = 0; i < QUERY_REPEATS; i++) {
      const order = i % 2 === 0 ? (['range', 'bucket'] as const) : (['bucket', 'range'] as const);
      for (const which of order) {
        const start = performance.now();
        const found = await queries[which]();
        const ms = performance.now() - start;
        if (found !== (which === 'range' ? rangeFound : bucketFound))
          throw new Error(`part A: the ${which} page changed between runs`);
        (which === 'range' ? rangeRuns : bucketRuns).push(ms);
      }
    }
    const rangeMs = median(rangeRuns);
    const bucketMs = median(bucketRuns);
    const rangeMin = Math.min(...rangeRuns);
    const bucketMin = Math.min(...bucketRuns);
    progress(
      `A: range page (${rangeFound}) median ${num(rangeMs)} ms (min ${num(rangeMin)}), bucket page (${bucketFound}) ` +
        `median ${num(bucketMs)} ms (min ${num(bucketMin)}), ${QUERY_REPEATS} warm runs each, alternating`,
    );

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
      // The bundle's workflow interceptors hand their spans to this sink, as on Lethe's own workers.
      sinks: { exporter: makeWorkflowExporter(runtime.tracing.processor, runtime.tracing.resource) },
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
    const floor = await perRecordFloor(memories, tenant, later.slice(0, PAGE));

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
          [
            `one page of {expiresAt ≤ now} sorted, limit ${PAGE} (ms)`,
            `${num(rangeMs)} median of ${QUERY_REPEATS} warm runs (min ${num(rangeMin)})`,
          ],
          [
            `one page of {tenant, expiryBucket} equality, limit ${PAGE} (ms)`,
            `${num(bucketMs)} median of ${QUERY_REPEATS} warm runs (min ${num(bucketMin)})`,
          ],
          ['range ÷ bucket, ratio of medians', ratio(rangeMs / bucketMs)],
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
          [
            `floor: one \`_id\` update per record, ${FLOOR_IN_FLIGHT} in flight (records/s)`,
            num(floor.writesPerSecond),
          ],
          ['floor: one `_id` update + one `_id` lookup per record (records/s)', num(floor.movesPerSecond)],
          [
            'mark rate ÷ floor (update + lookup)',
            ratio(run.value.expired / run.markMs / (floor.movesPerSecond / 1000)),
          ],
        ],
      ),
    );
    out();
    // The per-page cost across the run, from the histories: flat means a larger sweep is this many pages at this cost.
    const pages: number[] = [];
    for (const r of run.runs.slice().reverse()) {
      pages.push(...(await activityDurations(client.workflow.getHandle(run.workflowId, r.runId), 'markExpiredPage')));
    }
    const full = pages.filter((ms) => ms > 0);
    if (full.length >= 3) {
      const third = Math.max(1, Math.floor(full.length / 3));
      const part = (from: number, to: number) => median(full.slice(from, to));
      out(
        table(
          ['markExpiredPage (scheduled → completed), ms', 'first third', 'middle third', 'last third', 'all'],
          [
            [
              `${full.length} pages of ≤ ${PAGE}`,
              num(part(0, third)),
              num(part(third, 2 * third)),
              num(part(2 * third, full.length)),
              num(median(full)),
            ],
          ],
        ),
      );
      out(
        `Extrapolated: 10⁶ records ≈ ${num(Math.ceil(1e6 / PAGE))} pages × ${num(median(full))} ms ≈ ${seconds((1e6 / PAGE) * median(full))} s of marking (pages only; hand-off and workflow tasks extra).`,
      );
      out();
    }
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
  const tenant = benchName(`ret-b-${randomUUID().slice(0, 6)}`);
  const taskQueue = benchName(`retention-b-${randomUUID().slice(0, 6)}`);
  const services = createServices(runtime, { taskQueue, indexSettings: INDEX_SETTINGS });
  try {
    await services.ensureIndexes();
    await createExpiryQueue(runtime.db, runtime.cipher).ensureIndexes();
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

async function retentionSection(base: Config, connection: NativeConnection, bundle: { code: string }): Promise<void> {
  out(`## Retention sweep — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${load()}`);
  out();
  if (SKIP_A) out('(part A skipped: BENCH_RETENTION_SKIP_A=1)');
  else await retentionPartA(base, connection);
  await retentionPartB(base, connection, bundle);
}

async function main(): Promise<void> {
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const connection = await NativeConnection.connect({ address: base.temporal.address });
  try {
    out(`## bench:lifecycle — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${load()}`);
    out(`MongoDB ${base.mongo.uri} · Temporal ${base.temporal.address} · Elasticsearch ${base.elasticsearch.url}`);
    out();
    progress('bundling the Lethe workflows');
    const bundle = await bundleWorkflows();
    if (SKIP_ADMIT) out('(admission skipped: BENCH_ADMIT_SKIP=1)');
    else await admissionSection(base, connection, bundle);
    if (SKIP_RETENTION) out('(retention sweep skipped: BENCH_RETENTION_SKIP=1)');
    else await retentionSection(base, connection, bundle);
    out(`(load at the end: ${load()})`);
  } finally {
    await connection.close();
  }
}

// ── Main ──────────────────────────────────────────────────────────────────────────────────────────────────────

// runBench exits when main is done: stray handles (pools, timers) do not keep the process alive.
await runBench(async () => {
  TemporalRuntime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
  await main();
});
