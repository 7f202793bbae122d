/**
 * Erasure benchmark (`npm run bench:erasure`): end-to-end erasure of one data subject through Lethe against
 * the same deletes done by a plain script on the same stores, at two sizes, from one run.
 *
 * Per size (default 1 000 memories + 5 000 derived views, then 10 000 + 50 000; BENCH_ERASURE_SIZES="1000:5000,…"),
 * BENCH_ERASURE_RUNS (≥ 2, default 2) runs of each side, alternating, the side that goes first alternating too:
 *   - Lethe: a fresh tenant gets the dataset (bench/lib/erasure-dataset.ts, written directly into the stores), then an
 *     erasure request for the subject is filed through the erasure gateway and carried by the erasure workflow
 *     on a worker in this process; the bench polls the request until it is completed and reads each step's
 *     timestamps from it (bench/lib/erasure-lethe.ts).
 *   - plain: a fresh tenant gets an identical dataset (same seeded graph), and the plain script erases the same
 *     closure by hand (bench/lib/erasure-plain.ts).
 * Each tenant is removed once its side is done. The summary prints each side's min and median and both ratios.
 * Both tenants' indices are created with `index.soft_deletes.retention_lease.sync_interval: 1s` (the test-only
 * setting the integration tests use; production keeps the 30 s default), so both measure the same physical-
 * deletion path. MongoDB work runs in a database of its own (`<db>_bench_erasure`, kept between runs); each bench
 * tenant's documents are deleted by tenant equality and its index dropped once its size is done, and the bench's
 * workflow executions are deleted at the end.
 *
 * BENCH_ERASURE_SEALED=1 writes both tenants' events and memories sealed, a data key each, as the stores write users'
 * records: Lethe's purge then destroys that many keys before the rows; the plain script deletes the rows alone.
 *
 * Tables go to stdout, progress to stderr. BENCH_ERASURE_MAX_ATTEMPT (3) and BENCH_ERASURE_CAP_MIN (45) bound
 * a Lethe run that cannot finish as shipped (see erasure-lethe.ts).
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { DefaultLogger, NativeConnection, Runtime as TemporalRuntime } from '@temporalio/worker';
import { loadConfig } from '../src/config/load-config.js';
import { createRuntime } from '../app/runtime.js';
import { createServices } from '../app/services.js';
import { bundleWorkflows } from '../app/worker/worker.js';
import { tenantIndexNames } from '../src/substrate/search/index-layout.js';
import {
  buildDataset,
  dropTenant,
  leftovers,
  writeDataset,
  type Dataset,
  type DatasetPlan,
  type Leftovers,
  type SetupTimes,
} from './lib/erasure-dataset.js';
import { ACTIVITY_TIMEOUT_MS, runLethe, type LetheRun } from './lib/erasure-lethe.js';
import { plainErasure, segmentStats, type PlainResult } from './lib/erasure-plain.js';
import { num, ratio } from './lib/stack-report.js';
import { benchName, runBench } from './lib/bench-run.js';

const INDEX_SETTINGS = { 'index.soft_deletes.retention_lease.sync_interval': '1s' };
const SUBJECT_EVENTS = 300;
const CONTROL_EVENTS = 100;
const SIZES = (process.env.BENCH_ERASURE_SIZES ?? '1000:5000,10000:50000').split(',').map((pair) => {
  const [memories, views] = pair.split(':').map(Number);
  if (!memories || !views) throw new Error(`BENCH_ERASURE_SIZES: "${pair}" is not memories:views`);
  return { memories, views };
});
const MAX_ATTEMPT = Number(process.env.BENCH_ERASURE_MAX_ATTEMPT ?? 3);
const CAP_MS = Number(process.env.BENCH_ERASURE_CAP_MIN ?? 45) * 60_000;
/** Runs of each side per size (at least 2: one where it goes first, one where it goes second). */
const RUNS = Math.max(2, Number(process.env.BENCH_ERASURE_RUNS ?? 2));
/** `1`: both sides' events and memories are written sealed (a data key each), as users' records are stored. */
const SEALED = process.env.BENCH_ERASURE_SEALED === '1';

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (message: string) =>
  process.stderr.write(`bench:erasure ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const thousands = (n: number) => n.toLocaleString('en-US').replace(/,/g, ' ');
const s = (ms: number) => num(ms / 1000);

/** The median proper: with an even count, the mean of the two middle values (two runs: their mean). */
function middle(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rows of cells: the first and last columns left-aligned, the others right-aligned. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const last = header.length - 1;
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (c === 0 || c === last ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('   ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('   '), ...rows.map(line)].join('\n');
}

interface SizeResult {
  label: string;
  lethe: LetheRun;
  plain: PlainResult;
  /** Lethe end to end: as run, or (aborted) the steps before the failure as run + the rest run directly. */
  letheMs: number;
  estimated: boolean;
}

function printSize(
  label: string,
  data: Dataset,
  setup: { lethe: SetupTimes; plain: SetupTimes },
  lethe: LetheRun,
  plain: PlainResult,
  left: { lethe: Leftovers; plain: Leftovers },
  taskQueue: string,
): SizeResult {
  const e = data.expected;
  out(`\n## ${label}`);
  out(
    `dataset per tenant: subject ${data.plan.events} events + ${thousands(data.plan.memories)} memories + ${thousands(data.plan.views)} views ` +
      `(${thousands(Math.ceil(data.plan.views / 2))} tagged with the subject, ${thousands(e.collateral)} with other subjects: found only through lineage); ` +
      `control (other subjects, must survive) ${e.controlEvents} events + ${thousands(e.controlMemories)} memories; ` +
      `${thousands(data.edges.length)} lineage edges. Expected closure ${thousands(e.closure)} records (${thousands(e.located)} located + ${thousands(e.derived)} derived), ${thousands(e.closureEdges)} edges.`,
  );
  const setupLine = (t: SetupTimes) =>
    `MongoDB ${s(t.mongoMs)} s, index ${s(t.indexMs)} s, analyze ${s(t.analyzeMs)} s`;
  out(
    `setup (not timed below): Lethe tenant ${setupLine(setup.lethe)}; plain tenant ${setupLine(setup.plain)}. Load ${load()}.`,
  );

  out(
    `\nLethe — erasure workflow on an in-process worker (task queue ${taskQueue}): ${lethe.outcome === 'completed' ? `completed in ${s(lethe.totalMs)} s` : `DID NOT FINISH — ${lethe.reason}, after ${s(lethe.totalMs)} s`}`,
  );
  const letheTotal = lethe.totalMs;
  out(
    table(
      ['step', 'start (s)', 'time (s)', 'share', 'counts'],
      [
        ...lethe.timeline.map((r) => [
          r.step,
          r.startS === null ? '' : num(r.startS),
          s(r.ms),
          `${Math.round((100 * r.ms) / letheTotal)}%`,
          r.detail,
        ]),
        ['total (filing → completed)', '', s(letheTotal), '100%', ''],
      ],
    ),
  );
  const retried = lethe.activities.filter((a) => a.maxAttempt > 1 || a.timedOut > 0 || a.failed > 0);
  out(
    `activities: ${lethe.activities.map((a) => `${a.name} ×${a.scheduled}`).join(', ')}; timers ${lethe.timers}; ` +
      (retried.length === 0
        ? 'no retries.'
        : `retried: ${retried
            .map(
              (a) =>
                `${a.name} (reached attempt ${a.maxAttempt}${a.timedOut + a.failed > 0 ? `; final outcome ${a.timedOut ? 'timed out' : 'failed'}` : ''})`,
            )
            .join(', ')} — history keeps only the final attempt's outcome; earlier ones are in the progress lines.`),
  );
  let letheMs = lethe.totalMs;
  let estimated = false;
  if (lethe.direct) {
    const d = lethe.direct;
    estimated = true;
    letheMs = d.beforeMs + d.totalMs;
    out(
      `\nLethe — the steps from ${d.fromActivity} on, run once more directly (same activities, no Temporal, no activity timeout):`,
    );
    out(
      table(
        ['step', 'time (s)', 'activity timeout as shipped', 'counts'],
        [
          ['steps before, as the workflow ran them', s(d.beforeMs), '', `filing → start of ${d.fromActivity}`],
          ...d.rows.map((r) => {
            const timeout = ACTIVITY_TIMEOUT_MS[r.step.split(' ')[0]!] ?? 0;
            const flag = r.step.startsWith('expunge') ? 'per attempt' : r.ms > timeout ? 'EXCEEDED' : 'fits';
            return [r.step, s(r.ms), `${num(timeout / 60_000)} min, ${flag}`, r.detail];
          }),
          ['estimate end to end', s(letheMs), '', d.error ? `FAILED: ${d.error}` : ''],
        ],
      ),
    );
  }

  out(`\nplain script (no workflow, tombstones, probes, verification, certificate or audit): ${s(plain.totalMs)} s`);
  out(
    table(
      ['step', 'time (s)', 'share', 'detail'],
      [
        ...plain.steps.map((r) => [r.step, s(r.ms), `${Math.round((100 * r.ms) / plain.totalMs)}%`, r.detail]),
        ['total', s(plain.totalMs), '100%', ''],
      ],
    ),
  );

  const leftLine = (l: Leftovers) =>
    `${l.events}/${l.memories}/${l.edges}/${l.indexDocs}/${l.deletedDocs}/${l.closureSampleFound}`;
  out(`\n${label}: Lethe vs plain`);
  out(
    table(
      ['', 'Lethe', 'plain', 'Lethe ÷ plain'],
      [
        [
          `end to end (s)${estimated ? ' — Lethe estimated, see above' : ''}`,
          `${estimated ? '≈' : ''}${s(letheMs)}`,
          s(plain.totalMs),
          `${estimated ? '≈' : ''}${ratio(letheMs / plain.totalMs)}`,
        ],
        ['records erased per s', num((e.closure / letheMs) * 1000), num((e.closure / plain.totalMs) * 1000), ''],
        [
          'left: events/memories/edges/index docs/deleted docs/closure sample found',
          leftLine(left.lethe),
          leftLine(left.plain),
          `expected ${e.controlEvents}/${e.controlMemories}/${e.controlEdges}/${e.controlMemories}/0/0`,
        ],
      ],
    ),
  );
  return { label, lethe, plain, letheMs, estimated };
}

async function main(): Promise<void> {
  TemporalRuntime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
  // The erasure's cost does not depend on the vectors' model: the hashing embedder keeps the setup short (the local
  // model would embed every record of both tenants). LETHE_EMBEDDER overrides it.
  const env = {
    ...process.env,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    LETHE_EMBEDDER: process.env.LETHE_EMBEDDER ?? 'hashing',
  };
  const base = loadConfig(env);
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_bench_erasure`;
  const config = loadConfig({ ...env, MONGODB_URI: uri.toString() });
  const runtime = createRuntime(config, 'lethe-bench');
  const suffix = randomUUID().slice(0, 6);
  const taskQueue = benchName(`erasure-${suffix}`);
  const services = createServices(runtime, { taskQueue, indexSettings: INDEX_SETTINGS });
  const tenants: string[] = [];
  const workflowIds: string[] = [];
  const results: SizeResult[] = [];
  const sizes: { label: string; lethe: number[]; plain: number[] }[] = [];
  const started = performance.now();
  let connection: NativeConnection | null = null;
  try {
    // No dropDatabase: DDL under concurrent load is where the local FerretDB's registry lock can stall; bench
    // tenants are unique per run and their documents are deleted by tenant equality when each size is done.
    await services.ensureIndexes();
    await services.lineage.ensureIndexes();
    out(`erasure bench — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${load()}`);
    out(
      `MongoDB ${config.mongo.uri} (bench database) · Elasticsearch ${config.elasticsearch.url} · Temporal ${config.temporal.address}`,
    );
    out(
      SEALED
        ? 'Records sealed (BENCH_ERASURE_SEALED=1): each event and memory has its own data key, which Lethe destroys before the row; the plain script deletes the rows.'
        : 'Records not sealed (content stored as it is; BENCH_ERASURE_SEALED=1 seals them): Lethe has no data key to destroy.',
    );
    out(
      `Both Lethe and the plain script run on indices created with index.soft_deletes.retention_lease.sync_interval=1s ` +
        `(test-only setting; production keeps the 30 s default, which adds up to ~30 s of waiting to both), so both measure the same physical-deletion path.`,
    );
    progress('bundling workflows');
    const bundleStart = performance.now();
    const workflowBundle = await bundleWorkflows();
    connection = await NativeConnection.connect({ address: runtime.config.temporal.address });
    progress(`bundle ready in ${s(performance.now() - bundleStart)} s`);

    for (const [i, size] of SIZES.entries()) {
      const label = `${thousands(size.memories)} memories + ${thousands(size.views)} derived views`;
      const plan: DatasetPlan = {
        events: SUBJECT_EVENTS,
        memories: size.memories,
        views: size.views,
        controlEvents: CONTROL_EVENTS,
        controlMemories: Math.round((size.memories + size.views) / 10),
      };
      const seed = 1000 + i;
      const esIndex = (tenant: string) => {
        const { alias } = tenantIndexNames(config.elasticsearch.indexPrefix, tenant);
        return {
          alias,
          count: async () => (await runtime.es.count({ index: alias })).count,
          segments: () => segmentStats(runtime.es, alias),
        };
      };
      /** One side on a fresh tenant holding the same seeded dataset; the tenant is removed afterwards. */
      const side = async (kind: 'lethe' | 'plain', run: number) => {
        const tenant = benchName(`era-${kind[0]}${i}r${run}-${suffix}`);
        tenants.push(tenant);
        progress(`${label}, run ${run}: writing the ${kind} tenant's dataset`);
        const data = buildDataset(services.tenantMacs, tenant, plan, seed);
        const setup = await writeDataset(
          runtime.db,
          services,
          data,
          progress,
          SEALED ? (records) => runtime.cipher.sealAll(records) : undefined,
        );
        progress(`${label}, run ${run}: ${kind} erasure (load ${load()})`);
        const loadBefore = load();
        let lethe: LetheRun | null = null;
        let plain: PlainResult | null = null;
        if (kind === 'lethe') {
          lethe = await runLethe(runtime, services, tenant, data.subject, {
            taskQueue,
            connection: connection!,
            workflowBundle,
            maxAttempt: MAX_ATTEMPT,
            capMs: CAP_MS,
            progress,
          });
          workflowIds.push(lethe.workflowId);
        } else {
          plain = await plainErasure(runtime.db, runtime.es, esIndex(tenant).alias, tenant, data.subject);
        }
        progress(`${label}, run ${run}: ${kind} done in ${s((lethe?.totalMs ?? plain?.totalMs)!)} s`);
        const left = await leftovers(runtime.db, esIndex(tenant), data);
        await dropTenant(runtime.db, services, tenant);
        return { data, setup, lethe, plain, left, load: loadBefore };
      };

      // The two sides alternate, and the side that goes first alternates between runs, so that outside load and
      // a warming server reach both alike.
      const letheRuns: Awaited<ReturnType<typeof side>>[] = [];
      const plainRuns: Awaited<ReturnType<typeof side>>[] = [];
      for (let run = 1; run <= RUNS; run++) {
        const order = run % 2 === 1 ? (['lethe', 'plain'] as const) : (['plain', 'lethe'] as const);
        for (const kind of order) (kind === 'lethe' ? letheRuns : plainRuns).push(await side(kind, run));
      }
      for (const [run, l] of letheRuns.entries()) {
        const p = plainRuns[run]!;
        results.push(
          printSize(
            `${label}, run ${run + 1} (${run % 2 === 0 ? 'Lethe first' : 'plain first'}; load before Lethe ${l.load}, before plain ${p.load})`,
            l.data,
            { lethe: l.setup, plain: p.setup },
            l.lethe!,
            p.plain!,
            { lethe: l.left, plain: p.left },
            taskQueue,
          ),
        );
      }
      sizes.push({
        label,
        lethe: results.slice(-RUNS).map((r) => r.letheMs),
        plain: results.slice(-RUNS).map((r) => r.plain.totalMs),
      });
    }

    out(`\n## Summary, ${RUNS} runs per side and size (aim: Lethe ≤ 1.5× the plain script)`);
    out(
      table(
        [
          'size',
          'Lethe runs (s)',
          'plain runs (s)',
          'Lethe min / median (s)',
          'plain min / median (s)',
          'min ÷ min',
          'median ÷ median',
          'largest Lethe step (median run)',
        ],
        sizes.map((z) => {
          const runs = results.filter((r) => r.label.startsWith(`${z.label},`));
          const medianRun = [...runs].sort((a, b) => a.letheMs - b.letheMs)[Math.floor((runs.length - 1) / 2)]!;
          const rows = medianRun.lethe.direct ? medianRun.lethe.direct.rows : medianRun.lethe.timeline;
          const top = [...rows].sort((a, b) => b.ms - a.ms)[0];
          const estimated = runs.some((r) => r.estimated) ? '≈' : '';
          return [
            z.label,
            z.lethe.map(s).join(', '),
            z.plain.map(s).join(', '),
            `${estimated}${s(Math.min(...z.lethe))} / ${s(middle(z.lethe))}`,
            `${s(Math.min(...z.plain))} / ${s(middle(z.plain))}`,
            `${estimated}${ratio(Math.min(...z.lethe) / Math.min(...z.plain))}`,
            `${estimated}${ratio(middle(z.lethe) / middle(z.plain))}`,
            top ? `${top.step} ${s(top.ms)} s` : '',
          ];
        }),
      ),
    );
  } finally {
    // Normally already done per size; again here in case a size failed half-way.
    for (const tenant of tenants) await dropTenant(runtime.db, services, tenant).catch(() => undefined);
    let deleted = 0;
    for (const workflowId of workflowIds) {
      await services.temporalClient.workflowService
        .deleteWorkflowExecution({ namespace: config.temporal.namespace, workflowExecution: { workflowId } })
        .then(() => deleted++)
        .catch(() => undefined);
    }
    await connection?.close();
    await runtime.close();
    out(
      `\n(${s(performance.now() - started)} s in all, load ${load()} at the end; bench tenants' documents and indices removed, ${deleted}/${workflowIds.length} workflow executions deleted)`,
    );
  }
}

await runBench(main);
