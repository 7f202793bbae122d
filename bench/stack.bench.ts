/**
 * Raw costs of the local stack, the baseline later benchmarks compare against: `npm run bench:stack`.
 *
 * 1. Temporal: sequential latency of a 10-activity workflow (per activity step) and the rate of 20 concurrent
 *    one-activity workflows, on the stack's dev server (history.transferProcessorMaxPollRPS and
 *    history.timerProcessorMaxPollRPS raised to 1000) against a second dev server started here with the defaults.
 * 2. MongoDB (FerretDB on PostgreSQL locally): insertMany rate and 100 parallel `_id` / indexed-equality lookups at
 *    10⁴ and 10⁵ documents, with the GIN companion indexes of stack/postgres/bootstrap.sql and with them dropped.
 * 3. Elasticsearch: `_bulk` rate (text + keyword + 64-d dense_vector), BM25 + filter and filtered kNN latency.
 *
 * Everything it creates is its own and removed at the end: a task queue (and its workflow executions), a second
 * dev server (stopped by its pid), a database, an index. It talks to 127.0.0.1 only. Tables go to stdout,
 * progress to stderr. See /work/shared/STACK.md for the orders of magnitude and why.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client as EsClient } from '@elastic/elasticsearch';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { MongoClient } from 'mongodb';
import { commandLine, runBuildScript } from '../stack/processes.js';
import { stackServices } from '../stack/services.js';
import { loadStackConfig } from '../stack/stack-config.js';
import { measureElasticsearch, type EsPlan } from './lib/stack-elasticsearch.js';
import { measureAt, planCacheMode, prepareVariant, warmUp, type MongoPlan, type Variant } from './lib/stack-mongo.js';
import { markdownTable, num, ratio, table, timed } from './lib/stack-report.js';
import {
  bundleBenchWorkflows,
  deleteWorkflows,
  measureTemporal,
  startDefaultDevServer,
  summarise,
  type TemporalPlan,
} from './lib/stack-temporal.js';
import { benchName, runBench } from './lib/bench-run.js';

const TEMPORAL: TemporalPlan = { steps: 10, passes: 4, sequentialPerPass: 2, warmupPerPass: 1, concurrency: 20 };
const MONGO: MongoPlan = { sizes: [10_000, 100_000], parallel: 100, rounds: 3, sequential: 20 };
const ES: EsPlan = { docs: 3000, dims: 64, bulkSize: 500, queries: 200, warmup: 20, k: 10, numCandidates: 100 };
const MONGO_DATABASE = 'lethe_bench_stack';

const config = loadStackConfig();
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
for (const [name, host] of [
  ['TEMPORAL_ADDRESS', config.temporal.host],
  ['MONGODB_URI', config.mongo.host],
  ['ELASTICSEARCH_URL', config.elasticsearch.host],
] as const) {
  if (!LOOPBACK.has(host)) throw new Error(`bench:stack runs against the local stack only; ${name} points at ${host}`);
}

Runtime.install({ logger: new DefaultLogger('WARN') });

const progress = (message: string) => process.stderr.write(`bench:stack: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);
/** Highest 1-minute load average seen at a section boundary: a shared 2-core machine skews every figure. */
let peakLoad = 0;
const loadavg = () => {
  const load = os.loadavg();
  peakLoad = Math.max(peakLoad, load[0]!);
  return load.map((l) => l.toFixed(1)).join(' ');
};
const pow10 = (n: number) => `10^${Math.round(Math.log10(n))}`;

/** Deterministic pseudo-random numbers in [0, 1) (xorshift32), so that runs are comparable. */
function seeded(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/** Summary rows for the closing markdown table: area, measure, tuned stack, untuned, gain. */
const summary: string[][] = [];

async function temporalSection(): Promise<void> {
  const address = `${config.temporal.host}:${config.temporal.port}`;
  const binary = await runBuildScript('temporal', path.join(config.repoDir, 'stack', 'temporal', 'build-cli.sh'), {
    LETHE_CACHE_DIR: config.cacheDir,
  });
  const stackPid = stackServices(config)
    .services.find((s) => s.name === 'temporal')
    ?.ownPid();
  const stackArgs = stackPid === undefined ? '' : commandLine(stackPid);
  const raised = ['history.transferProcessorMaxPollRPS=1000', 'history.timerProcessorMaxPollRPS=1000'].filter((v) =>
    stackArgs.includes(v),
  );

  progress('temporal: bundling bench workflows and starting a second dev server with default limits');
  const [serverResult, bundleResult] = await Promise.allSettled([
    startDefaultDevServer(binary),
    timed(() => bundleBenchWorkflows()),
  ]);
  if (serverResult.status === 'rejected') throw serverResult.reason;
  const server = serverResult.value;
  try {
    if (bundleResult.status === 'rejected') throw bundleResult.reason;
    const bundle = bundleResult.value.value;
    progress(
      `temporal: bundle ${num(bundleResult.value.ms)} ms; default server pid ${server.pid} at ${server.address}`,
    );

    progress(`temporal: measuring ${address} (raised limits) and ${server.address} (defaults) in alternating passes`);
    const [tuned, defaults] = await measureTemporal(
      [
        { label: 'raised', address, namespace: config.temporal.namespace },
        { label: 'defaults', address: server.address, namespace: 'default' },
      ],
      bundle,
      TEMPORAL,
      progress,
    );
    const deleted = await deleteWorkflows(address, config.temporal.namespace, tuned.workflowIds).catch(() => 0);
    progress(`temporal: deleted ${deleted}/${tuned.workflowIds.length} bench workflow executions on ${address}`);

    const t = summarise(tuned, TEMPORAL.steps);
    const d = summarise(defaults, TEMPORAL.steps);
    const rows = [
      [
        `${TEMPORAL.steps}-activity workflow, p50 (ms)`,
        num(t.workflowP50),
        num(d.workflowP50),
        ratio(d.workflowP50 / t.workflowP50),
      ],
      [
        `${TEMPORAL.steps}-activity workflow, p95 (ms)`,
        num(t.workflowP95),
        num(d.workflowP95),
        ratio(d.workflowP95 / t.workflowP95),
      ],
      ['per activity step, p50 (ms)', num(t.stepP50), num(d.stepP50), ratio(d.stepP50 / t.stepP50)],
      [
        `${TEMPORAL.concurrency} concurrent 1-activity workflows (wf/s, median)`,
        num(t.concurrentRate),
        num(d.concurrentRate),
        ratio(t.concurrentRate / d.concurrentRate),
      ],
    ];
    out(`## Temporal dev server (SQLite file), TypeScript SDK worker in the bench process`);
    out(
      `${TEMPORAL.passes} alternating passes per server, each: ${TEMPORAL.warmupPerPass} warm-up + ${TEMPORAL.sequentialPerPass} measured ` +
        `sequential ${TEMPORAL.steps}-activity workflows, then ${TEMPORAL.concurrency} concurrent one-activity workflows ` +
        `(first pass: one more warm-up of each). Load ${loadavg()} at end.`,
    );
    out(
      `raised = stack server ${address} (${raised.length === 2 ? raised.join(', ') : `command line shows ${raised.length}/2 raised values: ${stackArgs ? 'check it' : 'not started by the stack'}`}); ` +
        `defaults = second server ${server.address}, no dynamic config.`,
    );
    out();
    out(table(['measure', 'raised limits', 'defaults', 'gain'], rows));
    out(`gain: defaults ÷ raised for times, raised ÷ defaults for rates.`);
    out(
      `sequential runs (ms): raised ${tuned.workflowMs.map(num).join(' ')}; defaults ${defaults.workflowMs.map(num).join(' ')}`,
    );
    out(
      `concurrent rounds (wf/s): raised ${tuned.concurrentRates.map(num).join(' ')}; defaults ${defaults.concurrentRates.map(num).join(' ')}`,
    );
    out();
    for (const row of [rows[0]!, rows[2]!, rows[3]!]) summary.push(['Temporal', row[0]!, row[1]!, row[2]!, row[3]!]);
  } finally {
    await server.stop();
    progress(`temporal: stopped default server pid ${server.pid}`);
  }
}

async function mongoSection(): Promise<void> {
  const client = new MongoClient(config.mongo.uri, { maxPoolSize: MONGO.parallel, serverSelectionTimeoutMS: 10_000 });
  const pgPort = config.postgres.port;
  try {
    await client.connect();
    const db = client.db(MONGO_DATABASE);
    await db.dropDatabase();
    const startLoad = loadavg();
    const cacheMode = await planCacheMode(pgPort);
    const variants: Variant[] = [
      await prepareVariant(db, pgPort, 'with GIN', true, 'lookups_gin'),
      await prepareVariant(db, pgPort, 'without GIN', false, 'lookups_plain'),
    ];
    const random = seeded(7);
    await warmUp(db, MONGO);
    for (const size of MONGO.sizes) {
      progress(`mongodb: growing both collections to ${size} documents and measuring`);
      await measureAt(db, variants, size, MONGO, random);
    }
    const endLoad = loadavg();

    const [withGin, withoutGin] = variants as [Variant, Variant];
    const rows: string[][] = [];
    for (const [i, size] of MONGO.sizes.entries()) {
      const w = withGin.results[i]!;
      const o = withoutGin.results[i]!;
      const p = MONGO.parallel;
      const sz = pow10(size);
      const insertNote = i === 0 ? `${pow10(w.inserted)} docs` : `+${num(w.inserted / 1000)}k docs`;
      rows.push(
        [
          `insertMany, ${insertNote} (docs/s)`,
          sz,
          num(w.insertRate),
          num(o.insertRate),
          ratio(w.insertRate / o.insertRate),
        ],
        [
          `${p} parallel _id lookups, total (ms)`,
          sz,
          num(w.byId.parallelMs),
          num(o.byId.parallelMs),
          ratio(o.byId.parallelMs / w.byId.parallelMs),
        ],
        [
          '  per lookup (ms, total ÷ 100)',
          sz,
          num(w.byId.parallelMs / p),
          num(o.byId.parallelMs / p),
          ratio(o.byId.parallelMs / w.byId.parallelMs),
        ],
        [
          `${p} parallel subjectId lookups, total (ms)`,
          sz,
          num(w.byField.parallelMs),
          num(o.byField.parallelMs),
          ratio(o.byField.parallelMs / w.byField.parallelMs),
        ],
        [
          '  per lookup (ms, total ÷ 100)',
          sz,
          num(w.byField.parallelMs / p),
          num(o.byField.parallelMs / p),
          ratio(o.byField.parallelMs / w.byField.parallelMs),
        ],
        [
          `one _id lookup alone, p50 of ${MONGO.sequential} (ms)`,
          sz,
          num(w.byId.singleP50),
          num(o.byId.singleP50),
          ratio(o.byId.singleP50 / w.byId.singleP50),
        ],
        [
          `one subjectId lookup alone, p50 of ${MONGO.sequential} (ms)`,
          sz,
          num(w.byField.singleP50),
          num(o.byField.singleP50),
          ratio(o.byField.singleP50 / w.byField.singleP50),
        ],
      );
      summary.push(
        [
          'MongoDB',
          `insertMany to ${sz} docs (docs/s)`,
          num(w.insertRate),
          num(o.insertRate),
          ratio(w.insertRate / o.insertRate),
        ],
        [
          'MongoDB',
          `${p} parallel _id lookups at ${sz} (ms)`,
          num(w.byId.parallelMs),
          num(o.byId.parallelMs),
          ratio(o.byId.parallelMs / w.byId.parallelMs),
        ],
        [
          'MongoDB',
          `${p} parallel equality lookups at ${sz} (ms)`,
          num(w.byField.parallelMs),
          num(o.byField.parallelMs),
          ratio(o.byField.parallelMs / w.byField.parallelMs),
        ],
      );
    }
    out(
      `## MongoDB wire protocol: FerretDB on PostgreSQL (${config.mongo.host}:${config.mongo.port}), database ${MONGO_DATABASE}`,
    );
    out(
      `indexes {subjectId: 1} and unique {tenant: 1, externalId: 1}; ~300-byte documents, ${5} per subjectId; insertMany in batches of 10^4. ` +
        `with GIN: ${withGin.ginIndexes.length} GIN jsonb_path_ops companions beside ${withGin.btreeIndexes} btree indexes (event trigger); ` +
        `without GIN: companions dropped (${withoutGin.ginIndexes.length} left). plan_cache_mode = ${cacheMode}.`,
    );
    out(
      `inserts and lookups interleaved between the two collections (order swapped each turn); lookups: median of ` +
        `${MONGO.rounds} rounds of ${MONGO.parallel} started at once (random keys), then ${MONGO.sequential} one at a time. ` +
        `Load ${startLoad} at start, ${endLoad} at end.`,
    );
    out();
    out(table(['measure', 'docs', 'with GIN', 'without GIN', 'gain'], rows));
    out(`gain: without ÷ with for times, with ÷ without for rates (below 1× = the GIN indexes cost).`);
    out();
  } finally {
    await client
      .db(MONGO_DATABASE)
      .dropDatabase()
      .catch((error: unknown) => progress(`mongodb: could not drop ${MONGO_DATABASE}: ${(error as Error).message}`));
    await client.close();
  }
}

async function elasticsearchSection(): Promise<void> {
  const client = new EsClient({ node: config.elasticsearch.url, requestTimeout: 120_000 });
  const index = benchName(`stack-${randomUUID().slice(0, 8)}`);
  try {
    progress(`elasticsearch: indexing ${ES.docs} documents into ${index} and querying`);
    const f = await measureElasticsearch(client, index, ES, seeded(11));
    const rows = [
      ['client latency p50 (ms)', num(f.bm25.p50), num(f.knn.p50), ratio(f.knn.p50 / f.bm25.p50)],
      ['client latency p95 (ms)', num(f.bm25.p95), num(f.knn.p95), ratio(f.knn.p95 / f.bm25.p95)],
      [
        'server took p50 (ms, whole ms)',
        String(f.bm25.tookP50),
        String(f.knn.tookP50),
        ratio(f.knn.tookP50 / f.bm25.tookP50),
      ],
      ['hits per query (mean)', num(f.bm25Hits), num(f.knnHits), ''],
    ];
    out(`## Elasticsearch (${config.elasticsearch.url}), one shard, index ${index}`);
    out(
      `${ES.docs} documents (text 20–60 words, 2 keywords, ${ES.dims}-d dense_vector, cosine, default int8_hnsw); ` +
        `_bulk of ${ES.bulkSize}: ${num(f.bulkRate)} docs/s (${num(f.bulkMs)} ms), then refresh ${num(f.refreshMs)} ms.`,
    );
    out(
      `${ES.queries} queries of each kind after ${ES.warmup} warm-up, interleaved; size ${ES.k}; filter = tenant term + 2 namespaces; ` +
        `kNN k ${ES.k}, num_candidates ${ES.numCandidates}. Load ${loadavg()} at end.`,
    );
    out();
    out(table(['measure', 'BM25 + filter', 'kNN + filter', 'kNN ÷ BM25'], rows));
    out();
    summary.push(
      ['Elasticsearch', `_bulk, ${ES.dims}-d vectors (docs/s)`, num(f.bulkRate), '—', '—'],
      ['Elasticsearch', 'BM25 + filter p50 / p95 (ms)', `${num(f.bm25.p50)} / ${num(f.bm25.p95)}`, '—', '—'],
      ['Elasticsearch', 'kNN + filter p50 / p95 (ms)', `${num(f.knn.p50)} / ${num(f.knn.p95)}`, '—', '—'],
    );
  } finally {
    await client.indices
      .delete({ index, ignore_unavailable: true })
      .catch((error: unknown) => progress(`elasticsearch: could not delete ${index}: ${(error as Error).message}`));
    await client.close();
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  out(
    `# Local stack baseline (${new Date().toISOString().slice(0, 10)}; ${os.cpus().length} cores, load ${loadavg()} at start; ` +
      `node ${process.version})`,
  );
  out();
  await temporalSection();
  await mongoSection();
  await elasticsearchSection();
  out('## Summary');
  out();
  out(markdownTable(['Server', 'Measure', 'Local stack', 'Untuned', 'Gain'], summary));
  out();
  out(
    'Local stack = Temporal with raised dispatch limits, FerretDB with GIN companions; Untuned = Temporal defaults, ' +
      'no GIN companions. Gain as in the tables above.',
  );
  const cores = os.cpus().length;
  loadavg();
  if (peakLoad > 2 * cores) {
    out();
    out(
      `Caveat: the 1-minute load average reached ${peakLoad.toFixed(1)} on ${cores} cores during this run: every figure ` +
        `includes CPU queueing, and a CPU-starved Temporal step (≥ 50 ms) hides the 20/s dispatch limit. Compare ratios ` +
        `from runs at lower load.`,
    );
  }
  progress(`done in ${num((performance.now() - started) / 1000)} s`);
}

await runBench(main);
