/**
 * Admission, step by step: `npm run bench:admission`.
 *
 * BENCH_ADMIT_BATCHES (default 4) batches of BENCH_ADMIT_SIZE (default 250) low-impact preferences, each with the
 * event it was learned from and which states it (the derivation audit finds every one supported), written through
 * the write gateway the API uses (stage, `ingestBatch` on a full Lethe worker), with the derivation audit in the
 * mode users run (`enforce`, the default; LETHE_DERIVATION_AUDIT overrides it). After a warm-up batch, each batch is
 * followed by a direct insert of the same documents (`insertMany` + `_bulk` with refresh=wait_for) for the ratio.
 *
 * The profile: each step of the workflow from its history (activity scheduled → completed; the rest of the
 * workflow's time is its tasks and dispatch; the rest of the client's is staging and starting), and inside each
 * activity, every port method the activity called (the ports the worker's activities are built over, wrapped with
 * a timing proxy): calls, wall time (union of its calls' intervals) and summed time per batch. Ports run
 * concurrently, so the wall times of different methods may overlap; "no port call in flight" is the activity's
 * own work (policies, hashing, the audit's ranking) and the gaps between calls.
 *
 * Uses a MongoDB database of its own (dropped at the end), its own task queue, tenants and index prefix.
 * Tables go to stdout, progress to stderr.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { NativeConnection, DefaultLogger, Runtime as TemporalRuntime } from '@temporalio/worker';
import { createRuntime } from '../app/runtime.js';
import { createServices, type Services } from '../app/services.js';
import { bundleWorkflows, createLetheWorker } from '../app/worker/worker.js';
import { loadConfig } from '../src/config/load-config.js';
import { createExpiryQueue } from '../src/governance/retention/expiry-queue.js';
import type { EventRecord, MemoryRecord } from '../src/substrate/model/records.js';
import { Collections } from '../src/substrate/mongo/collections.js';
import { AdmissionProfile } from './lib/admission-profile.js';
import { benchName, runBench } from './lib/bench-run.js';
import { activityTimings, admissionBatch, directDocuments } from './lib/lifecycle-admission.js';
import { loadAverage, median, num, ratio, table } from './lib/stack-report.js';

const BATCHES = Number(process.env.BENCH_ADMIT_BATCHES ?? 4);
const SIZE = Number(process.env.BENCH_ADMIT_SIZE ?? 250);
const INDEX_SETTINGS = { 'index.soft_deletes.retention_lease.sync_interval': '1s' };
/** The activities of `ingestBatch`, in the order it runs them. */
const STEPS = ['admitStagedBatch', 'detectContradictions', 'indexMemories', 'discardStage'] as const;
/** The ports the activities are built over that the profile times (each as `port.method`). */
const PORTS = [
  'events',
  'memories',
  'lineage',
  'tombstones',
  'fences',
  'audit',
  'claims',
  'restrictions',
  'staging',
  'index',
  'disputes',
  'tenantMacs',
  'derivation',
] as const satisfies readonly (keyof Services)[];

const progress = (message: string) => process.stderr.write(`bench:admission: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);
const share = (part: number, whole: number) => `${num((part / whole) * 100)} %`;

/** The services with each profiled port wrapped (the workflows' client and everything else as they are). */
function profiled(services: Services, profile: AdmissionProfile): Services {
  const wrapped: Partial<Record<keyof Services, unknown>> = {};
  for (const port of PORTS) {
    const value = services[port] as unknown;
    if (value !== null && typeof value === 'object') wrapped[port] = profile.wrap(value, port);
  }
  return { ...services, ...wrapped } as Services;
}

async function main(): Promise<void> {
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_bench_admission`;
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'warn',
    MONGODB_URI: uri.toString(),
    LETHE_INDEX_PREFIX: 'lethe-bench-admp',
  });
  const mode = config.derivation.mode;
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const runtime = createRuntime(config, 'lethe-bench');
  const suffix = randomUUID().slice(0, 6);
  const tenant = benchName(`admp-wf-${suffix}`);
  const directTenant = benchName(`admp-direct-${suffix}`);
  const taskQueue = benchName(`admission-profile-${suffix}`);
  const services = createServices(runtime, { taskQueue, indexSettings: INDEX_SETTINGS });
  const profile = new AdmissionProfile();
  const writer = 'bench-agent';
  const startedAt = new Date();
  const loads: string[] = [loadAverage()];
  try {
    out(`## bench:admission — ${startedAt.toISOString()}, ${os.cpus().length} cores, load ${loadAverage()}`);
    out(
      `MongoDB ${config.mongo.uri} · Temporal ${config.temporal.address} · Elasticsearch ${config.elasticsearch.url}`,
    );
    out();
    await services.ensureIndexes();
    await createExpiryQueue(runtime.db, runtime.cipher).ensureIndexes();
    progress('bundling the Lethe workflows');
    const workflowBundle = await bundleWorkflows();
    const worker = await createLetheWorker(runtime, {
      taskQueue,
      services: profiled(services, profile),
      connection,
      workflowBundle,
    });
    const events = runtime.db.collection<EventRecord>(Collections.events);
    const memories = runtime.db.collection<MemoryRecord>(Collections.memories);
    const policies = { impact: services.rules.impact, retention: services.rules.retention };
    const labels = new Map<string, number>();

    const admit = async (batch: ReturnType<typeof admissionBatch>, measured: boolean) => {
      const result = await services.workflows.writes.submit({ id: writer, tenant, roles: ['agent'] }, batch);
      if (result.refused) throw new Error(`refused: ${result.refused.type} at ${result.refused.field}`);
      const notActive = result.memories.filter((m) => m.status !== 'active');
      if (notActive.length > 0 || result.disputes.length > 0 || result.indexed !== batch.memories.length)
        throw new Error(
          `${notActive.length} memories not active (${notActive[0]?.derivation ?? '-'}), ${result.disputes.length} ` +
            `disputes, ${result.indexed} of ${batch.memories.length} indexed`,
        );
      if (measured)
        for (const m of result.memories) labels.set(m.derivation ?? '-', (labels.get(m.derivation ?? '-') ?? 0) + 1);
    };
    const direct = async (batch: ReturnType<typeof admissionBatch>) => {
      const docs = directDocuments(services.tenantMacs, directTenant, writer, batch, policies);
      await events.insertMany(docs.events, { ordered: false });
      await memories.insertMany(docs.memories, { ordered: false });
      const { indexed } = await services.index.upsert(directTenant, docs.memories, { refresh: 'wait_for' });
      if (indexed !== docs.memories.length) throw new Error(`direct: indexed ${indexed} of ${docs.memories.length}`);
    };

    const timings = await worker.runUntil(async () => {
      await admit(admissionBatch(BATCHES + 1, 20), false);
      await direct(admissionBatch(BATCHES + 2, 20));
      progress(`${BATCHES} batches of ${SIZE}, derivation audit ${mode} (load ${loadAverage()})`);
      profile.start();
      const workflowMs: number[] = [];
      const directMs: number[] = [];
      for (let b = 0; b < BATCHES; b++) {
        const batch = admissionBatch(b, SIZE);
        let started = performance.now();
        await admit(batch, true);
        workflowMs.push(performance.now() - started);
        started = performance.now();
        await direct(batch);
        directMs.push(performance.now() - started);
        loads.push(loadAverage());
        progress(
          `batch ${b + 1}/${BATCHES}: workflow ${num(workflowMs.at(-1)! / 1000)} s, direct ` +
            `${num(directMs.at(-1)! / 1000)} s (load ${loadAverage()})`,
        );
      }
      profile.stop();
      return { workflowMs, directMs };
    });

    // The measured workflows' histories (the warm-up's left out: the profile kept only the measured ones).
    const client = services.temporalClient;
    const listed: { workflowId: string; startTime: Date }[] = [];
    for (let attempt = 0; attempt < 20 && listed.length < BATCHES + 1; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 500));
      listed.length = 0;
      for await (const w of client.workflow.list({
        query: `LetheTenant = '${tenant}' AND LetheWorkflowKind = 'ingest'`,
      }))
        listed.push({ workflowId: w.workflowId, startTime: w.startTime });
    }
    listed.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    const histories = await Promise.all(
      listed.slice(1).map((w) => activityTimings(client.workflow.getHandle(w.workflowId))),
    );
    const n = histories.length;
    const perBatch = (ms: number) => ms / BATCHES;
    const clientTotal = timings.workflowMs.reduce((a, b) => a + b, 0);
    const directTotal = timings.directMs.reduce((a, b) => a + b, 0);
    const stepMs = (type: string) => histories.reduce((s, h) => s + (h.byType.get(type) ?? 0), 0);
    const inActivities = STEPS.reduce((s, t) => s + stepMs(t), 0);
    const serverMs = histories.reduce((s, h) => s + h.workflowMs, 0);
    const retries = histories.reduce((s, h) => s + h.retries + h.failures, 0);

    out(
      `### Admission by step — ${BATCHES} batches of ${SIZE} memories (each with the event that states it), ` +
        `derivation audit \`${mode}\``,
    );
    out();
    out(
      `${startedAt.toISOString().slice(0, 16)} UTC, load ${loads[0]} at the start, ${loads.at(-1)} at the end; ` +
        `${n} histories, ${retries} activity retries or failures; derivation labels: ` +
        `${[...labels].map(([l, c]) => `${l} ${c}`).join(', ')}.`,
    );
    out();
    const rows: [string, number][] = [
      ...STEPS.map((t): [string, number] => [`activity ${t}`, stepMs(t)]),
      ['workflow tasks and dispatch (between activities)', serverMs - inActivities],
      ['client: stage, start, answer (outside the workflow)', clientTotal - serverMs],
    ];
    out(
      table(
        ['step', 'ms per batch', 'ms per memory', 'share of total'],
        [
          ...rows.map(([name, ms]) => [name, num(perBatch(ms)), num(ms / (BATCHES * SIZE)), share(ms, clientTotal)]),
          ['total (client-observed)', num(perBatch(clientTotal)), num(clientTotal / (BATCHES * SIZE)), '100 %'],
          [
            'direct insert of the same documents',
            num(perBatch(directTotal)),
            num(directTotal / (BATCHES * SIZE)),
            share(directTotal, clientTotal),
          ],
        ],
      ),
    );
    out();
    out(
      `Workflow / direct: ${ratio(directTotal / clientTotal)} the direct insert's rate (p50 per batch ` +
        `${num(median(timings.workflowMs))} ms against ${num(median(timings.directMs))} ms).`,
    );
    out();
    for (const type of STEPS) {
      const activity = perBatch(stepMs(type));
      const ports = profile.rows(type);
      if (ports.length === 0) continue;
      const busy = profile.anyPortMs(type);
      out(`#### Inside \`${type}\` (${num(activity)} ms per batch), by port method`);
      out();
      out(
        table(
          ['port.method', 'calls per batch', 'wall ms per batch', 'summed ms per batch', 'wall share of activity'],
          [
            ...ports
              .filter((p) => p.wallMs >= 0.5 || p.calls >= 1)
              .map((p) => [p.name, num(p.calls), num(p.wallMs), num(p.summedMs), share(p.wallMs, activity)]),
            ['any port call in flight', '', num(busy), '', share(busy, activity)],
            [
              'no port call in flight (own work, dispatch)',
              '',
              num(activity - busy),
              '',
              share(activity - busy, activity),
            ],
          ],
        ),
      );
      out();
    }
    out(`(load at the end: ${loadAverage()})`);
  } finally {
    await services.index.dropTenant(tenant).catch(() => undefined);
    await services.index.dropTenant(directTenant).catch(() => undefined);
    await runtime.db.dropDatabase().catch((error: unknown) => progress(`drop failed: ${(error as Error).message}`));
    await runtime.close();
    await connection.close();
  }
}

await runBench(async () => {
  TemporalRuntime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
  await main();
});
