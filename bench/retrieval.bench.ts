/**
 * Governed-retrieval benchmark (`npm run bench:retrieval`, or `npx tsx bench/retrieval.bench.ts` with the stack up).
 *
 * One multi-tenant dataset shaped like the admissibility study (seed 003; bench/lib/retrieval-dataset.ts):
 * BENCH_RETRIEVAL_MEMORIES (default 50 000) memories over BENCH_RETRIEVAL_TENANTS (4) tenants of
 * BENCH_RETRIEVAL_PRINCIPALS (20) principals each, owner scope `principal:<id>` or `tenant`; BENCH_RETRIEVAL_QUERIES
 * (2 000) queries, each by one principal about one topic with 1–3 required-evidence anchors admissible for it.
 * Distractors in the same topic: other principals' records (wrong scope), superseded states of the same facts
 * (inadmissible for `current` intent; some queries ask `history` with a superseded anchor), records deleted before
 * purge (status `deleted` in MongoDB; in the index with status `deleted`, still with their old status, or absent)
 * and held records (`restrictedBy` in MongoDB, which the index does not carry). Written directly: `insertMany`
 * (≤ 500 documents a command) of the records admission would store, and the index adapter's `upsert` (hashing
 * embedder, `_bulk` of 500).
 *
 * Routes, each asked top-k for k ∈ {10, 20, 50}, interleaved per query (route order rotates) so noise falls on all:
 *  1. global BM25 — tenant filter only;  2. global dense kNN — tenant filter only (the adapter's kNN settings);
 *  3. global hybrid RRF — the index adapter's search with no filters but its tenant term;
 *  4. global hybrid, post-filtered — depth 500 unfiltered, then each hit re-read from MongoDB and judged with
 *     admissibility.ts `judge()` in rank order (pages of 2k) until k are admissible;
 *  5. Lethe — RetrievalService.retrieve: scope/lifecycle filters pushed into both halves, MongoDB re-read, refill.
 *     The context budget is set to its maximum so that packing leaves nothing out (this measures retrieval).
 * Routes 1–3 return what an unfiltered agent would see.
 *
 * Vector operations: a separate, untimed pass over BENCH_RETRIEVAL_PROFILE_QUERIES (50) queries with `profile: true`
 * on every kNN search the route sends (the adapter's `_msearch` bodies through a client wrapper), summing
 * `profile.shards[].dfs.knn[].vector_operations_count`. Latency: wall time around each call, after
 * BENCH_RETRIEVAL_WARMUP (20) warm-up queries. Uses database `<db>_bench_retrieval` and index prefix
 * `lethe-bench-rtv`; both are dropped at the end, also on failure. Table to stdout, progress to stderr.
 */
import os from 'node:os';
import type { Client, estypes } from '@elastic/elasticsearch';
import type { Collection } from 'mongodb';
import { createRuntime } from '../app/runtime.js';
import type { Config } from '../src/config/config.js';
import { loadConfig } from '../src/config/load-config.js';
import { createMongoDisputeStore } from '../src/governance/disputes/dispute-store.js';
import { judge } from '../src/governance/read/admissibility.js';
import { createMongoExposureStore } from '../src/retrieval/exposure-store.js';
import { createRetrievalService, type RetrievalService } from '../src/retrieval/retrieval-service.js';
import { createReadTrace } from '../src/retrieval/read-trace.js';
import { createFingerprinter, createTenantMacs } from '../src/substrate/fingerprint.js';
import { createMongoMemoryStore, type MemoryStore } from '../src/substrate/memories/memory-store.js';
import type { MemoryRecord } from '../src/substrate/model/records.js';
import { Collections } from '../src/substrate/mongo/collections.js';
import {
  createElasticsearchSearchIndex,
  numCandidates,
  rankWindow,
} from '../src/substrate/search/elasticsearch-search-index.js';
import { createEmbedder } from '../src/substrate/search/embedder-factory.js';
import { tenantIndexNames } from '../src/substrate/search/index-layout.js';
import type { SearchIndex } from '../src/substrate/search/search-index.port.js';
import { generateDataset, RETRIEVAL_SHARES, type BenchQuery } from './lib/retrieval-dataset.js';
import { accessOf, addAnswer, emptyTally, TAU, viewOf, type Tally } from './lib/retrieval-metrics.js';
import { profilingClient, vectorOperations } from './lib/retrieval-profile.js';
import { markdownTable, num, percentile, ratio } from './lib/stack-report.js';
import { envInt, runBench } from './lib/bench-run.js';
import { StageClock } from './lib/stage-clock.js';

const MEMORIES = envInt('BENCH_RETRIEVAL_MEMORIES', 50_000);
const QUERIES = envInt('BENCH_RETRIEVAL_QUERIES', 2000);
const TENANTS = envInt('BENCH_RETRIEVAL_TENANTS', 4);
const PRINCIPALS = envInt('BENCH_RETRIEVAL_PRINCIPALS', 20);
const PROFILE_QUERIES = envInt('BENCH_RETRIEVAL_PROFILE_QUERIES', 50);
const WARMUP = envInt('BENCH_RETRIEVAL_WARMUP', 20);
const SEED = envInt('BENCH_RETRIEVAL_SEED', 3);
const INSERT_BATCH = Math.min(500, Math.max(1, envInt('BENCH_RETRIEVAL_INSERT_BATCH', 500)));
const POST_FILTER_DEPTH = 500;
const KS = [10, 20, 50] as const;
type K = (typeof KS)[number];

const ROUTES = [
  'global BM25',
  'global dense kNN',
  'global hybrid RRF',
  'global hybrid + post-filter',
  'Lethe retrieve',
] as const;
type Route = (typeof ROUTES)[number];
const LETHE: Route = 'Lethe retrieve';

const progress = (message: string) => process.stderr.write(`bench:retrieval: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

function withDatabase(base: Config, name: string, extra: Record<string, string> = {}): Config {
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_${name}`;
  return loadConfig({ ...process.env, LOG_LEVEL: 'warn', MONGODB_URI: uri.toString(), ...extra });
}

interface RouteDeps {
  es: Client;
  prefix: string;
  index: SearchIndex;
  memories: MemoryStore;
  retrieval: RetrievalService;
  embed(text: string): Promise<number[]>;
  /** Lethe's own counts, summed (candidates judged, short answers). */
  lethe: { candidates: number; short: number; calls: number };
}

/** The routes as functions of (query, k) → ids best first; each may carry an ES `profile` flag for routes 1–2. */
function routes(d: RouteDeps, profile: { ops: number | null } | null) {
  const alias = (tenant: string) => tenantIndexNames(d.prefix, tenant).alias;
  const searchIds = async (request: estypes.SearchRequest) => {
    const response = await d.es.search({
      ...request,
      _source: false,
      track_total_hits: false,
      ...(profile ? { profile: true } : {}),
    });
    if (profile) profile.ops = vectorOperations(response);
    return response.hits.hits.map((h) => h._id).filter((id): id is string => typeof id === 'string');
  };
  const table: Record<Route, (q: BenchQuery, k: K) => Promise<string[]>> = {
    'global BM25': (q, k) =>
      searchIds({
        index: alias(q.tenant),
        size: k,
        query: { bool: { must: [{ match: { content: q.text } }], filter: [{ term: { tenant: q.tenant } }] } },
      }),
    'global dense kNN': async (q, k) =>
      searchIds({
        index: alias(q.tenant),
        size: k,
        // The same HNSW effort as the adapter's kNN half for this k.
        knn: {
          field: 'embedding',
          query_vector: await d.embed(q.text),
          k,
          num_candidates: numCandidates(rankWindow(k)),
          filter: [{ term: { tenant: q.tenant } }],
        },
      }),
    'global hybrid RRF': async (q, k) =>
      (await d.index.search(q.tenant, { text: q.text, k, filters: {} })).map((h) => h.id),
    'global hybrid + post-filter': async (q, k) => {
      const hits = await d.index.search(q.tenant, { text: q.text, k: POST_FILTER_DEPTH, filters: {} });
      const view = viewOf(q);
      const kept: string[] = [];
      for (let i = 0; i < hits.length && kept.length < k; i += 2 * k) {
        const page = hits.slice(i, i + 2 * k);
        const records = new Map(
          (
            await d.memories.getMany(
              q.tenant,
              page.map((h) => h.id),
            )
          ).map((r) => [r._id, r]),
        );
        for (const hit of page) {
          const record = records.get(hit.id);
          if (record && kept.length < k && judge(record, view).admissible === 1) kept.push(hit.id);
        }
      }
      return kept;
    },
    'Lethe retrieve': async (q, k) => {
      const result = await d.retrieval.retrieve(
        q.tenant,
        { query: q.text, intent: q.intent, k, budgetTokens: 100_000 },
        accessOf(q),
      );
      d.lethe.calls++;
      d.lethe.candidates += result.counts.candidates;
      if (result.short) d.lethe.short++;
      return result.items.map((i) => i.memory.record._id);
    },
  };
  return table;
}

async function insertRecords(memories: Collection<MemoryRecord>, records: readonly MemoryRecord[]) {
  // FerretDB: keep each command small (STACK.md); inserts of ≤ 500 documents are safe here.
  for (let i = 0; i < records.length; i += INSERT_BATCH)
    await memories.insertMany(records.slice(i, i + INSERT_BATCH), { ordered: false });
}

async function main(): Promise<void> {
  const wallStart = performance.now();
  const base = loadConfig();
  const config = withDatabase(base, 'bench_retrieval', { LETHE_INDEX_PREFIX: 'lethe-bench-rtv' });
  const prefix = config.elasticsearch.indexPrefix;
  const runtime = createRuntime(config, 'lethe-bench');
  const fingerprints = createFingerprinter(config.secrets.fingerprintKeys);
  const memories = createMongoMemoryStore(runtime.db, runtime.cipher);
  const disputes = createMongoDisputeStore(runtime.db, runtime.cipher);
  const exposures = createMongoExposureStore(runtime.db, fingerprints);
  const embedder = createEmbedder(config.embedder);
  const index = createElasticsearchSearchIndex(runtime.es, { prefix, embedder });
  const trace = createReadTrace({ exposures, macs: createTenantMacs(config.secrets.fingerprintKeys) });
  // Lethe's route runs over timed ports, so the report can say where its time goes.
  const clock = new StageClock();
  const retrieval = createRetrievalService({
    index: clock.wrap(
      createElasticsearchSearchIndex(runtime.es, { prefix, embedder: clock.wrap(embedder, 'embed query') }),
      'index search (with embed)',
    ),
    memories: clock.wrap(memories, 'MongoDB re-read'),
    disputes: clock.wrap(disputes, 'open disputes'),
    trace: clock.wrap(trace, 'record retrieval'),
  });
  const profiled = profilingClient(runtime.es);
  const profiledIndex = createElasticsearchSearchIndex(profiled.client, { prefix, embedder });
  const profiledRetrieval = createRetrievalService({
    index: profiledIndex,
    memories,
    disputes,
    trace,
  });
  const embed = async (text: string) => (await embedder.embed([text]))[0]!;

  const dataset = generateDataset({
    memories: MEMORIES,
    queries: QUERIES + WARMUP,
    tenants: TENANTS,
    principalsPerTenant: PRINCIPALS,
    seed: SEED,
    ...RETRIEVAL_SHARES,
  });
  const tenants = dataset.tenants.map((t) => t.tenant);
  try {
    await memories.ensureIndexes();
    await disputes.ensureIndexes();
    await exposures.ensureIndexes();
    const collection = runtime.db.collection<MemoryRecord>(Collections.memories);
    const loadStart = performance.now();
    let indexed = 0;
    for (const t of dataset.tenants) {
      await index.dropTenant(t.tenant);
      await index.ensureTenantIndex(t.tenant);
      await insertRecords(collection, t.records);
      for (let i = 0; i < t.indexed.length; i += 5000) {
        const slice = t.indexed.slice(i, i + 5000);
        const result = await index.upsert(t.tenant, slice, { refresh: i + 5000 >= t.indexed.length });
        if (result.failed.length > 0) throw new Error(`${result.failed.length} documents failed to index`);
        indexed += result.indexed;
      }
      progress(`loaded ${t.tenant}: ${t.records.length} records, ${t.indexed.length} indexed (load ${load()})`);
    }
    const loadMs = performance.now() - loadStart;
    const queries = dataset.queries.slice(WARMUP);
    const warmup = dataset.queries.slice(0, WARMUP);
    const anchorsPerQuery = queries.reduce((n, q) => n + q.anchors.length, 0) / Math.max(1, queries.length);
    const historyQueries = queries.filter((q) => q.intent === 'history').length;
    progress(`loaded ${dataset.byId.size} records in ${(loadMs / 1000).toFixed(1)} s; ${queries.length} queries`);

    const lethe = { candidates: 0, short: 0, calls: 0 };
    const run = routes({ es: runtime.es, prefix, index, memories, retrieval, embed, lethe }, null);
    const tallies = new Map<string, Tally>(ROUTES.flatMap((r) => KS.map((k) => [`${r}@${k}`, emptyTally()])));
    for (const q of warmup) for (const r of ROUTES) for (const k of KS) await run[r](q, k);
    lethe.candidates = lethe.short = lethe.calls = 0;

    const measureStart = performance.now();
    for (const [i, q] of queries.entries()) {
      for (let j = 0; j < ROUTES.length; j++) {
        const route = ROUTES[(i + j) % ROUTES.length]!;
        for (const k of KS) {
          if (route === LETHE) clock.start();
          const start = performance.now();
          const ids = await run[route](q, k);
          const ms = performance.now() - start;
          clock.stop();
          if (route === LETHE) clock.add('whole call', ms);
          addAnswer(tallies.get(`${route}@${k}`)!, q, ids, dataset.byId, ms);
        }
      }
      if ((i + 1) % 100 === 0 || i + 1 === queries.length) {
        const elapsed = performance.now() - measureStart;
        const eta = (elapsed / (i + 1)) * (queries.length - i - 1);
        progress(
          `queries ${i + 1}/${queries.length}, ${(elapsed / 1000).toFixed(0)} s, eta ${(eta / 1000).toFixed(0)} s (load ${load()})`,
        );
      }
    }
    const measureMs = performance.now() - measureStart;

    // Vector operations: untimed, profiled pass over a sample spread over the query list.
    const sampleSize = Math.min(PROFILE_QUERIES, queries.length);
    const sample = Array.from(
      { length: sampleSize },
      (_, i) => queries[Math.floor((i * queries.length) / sampleSize)]!,
    );
    const directProfile = { ops: null as number | null };
    const profiledRun = routes(
      {
        es: runtime.es,
        prefix,
        index: profiledIndex,
        memories,
        retrieval: profiledRetrieval,
        embed,
        lethe: { candidates: 0, short: 0, calls: 0 },
      },
      directProfile,
    );
    const vectorOps = new Map<string, { total: number; missing: number; searches: number }>();
    for (const route of ROUTES) {
      for (const k of KS) {
        const acc = { total: 0, missing: 0, searches: 0 };
        for (const q of sample) {
          profiled.counter.reset();
          directProfile.ops = null;
          await profiledRun[route](q, k);
          if (route === 'global BM25') continue;
          if (route === 'global dense kNN') {
            acc.searches++;
            if (directProfile.ops === null) acc.missing++;
            else acc.total += directProfile.ops;
          } else {
            acc.total += profiled.counter.total;
            acc.missing += profiled.counter.missing;
            acc.searches += profiled.counter.searches;
          }
        }
        vectorOps.set(`${route}@${k}`, acc);
      }
    }
    progress(`profiled ${sampleSize} queries`);

    // ── Report ──
    const t = (route: Route, k: K) => tallies.get(`${route}@${k}`)!;
    const perK = (f: (k: K) => string) => KS.map(f).join(' / ');
    const recall = (route: Route, k: K) => t(route, k).recallSum / Math.max(1, t(route, k).queries);
    const p = (route: Route, k: K, q: number) => percentile(t(route, k).latencies, q);
    const ops = (route: Route, k: K) => {
      const v = vectorOps.get(`${route}@${k}`)!;
      if (route === 'global BM25') return 0;
      return v.searches > 0 && v.missing === v.searches ? NaN : v.total;
    };
    const opsCell = (route: Route, k: K) => {
      const v = vectorOps.get(`${route}@${k}`)!;
      if (route === 'global BM25') return '0';
      if (v.searches > 0 && v.missing === v.searches) return 'n/a';
      return `${Math.round(v.total).toLocaleString('en-US')}${v.missing > 0 ? '*' : ''}`;
    };
    const header = [
      'route',
      'anchor recall @10/20/50',
      `feasible τ=${TAU} @10/20/50`,
      'inadmissible exposure @10/20/50',
      'wrong-scope items @10/20/50',
      'deleted items @10/20/50',
      'held / superseded-for-current items @50',
      `vector ops, sum over ${sampleSize} q @10/20/50`,
      'p50 ms @10/20/50',
      'p95 ms @10/20/50',
    ];
    const rows = ROUTES.map((r) => [
      r,
      perK((k) => recall(r, k).toFixed(3)),
      perK((k) => (t(r, k).feasible / Math.max(1, t(r, k).queries)).toFixed(3)),
      perK((k) => (t(r, k).inadmissible / Math.max(1, t(r, k).returned)).toFixed(3)),
      perK((k) => String(t(r, k).wrongScope)),
      perK((k) => String(t(r, k).deleted)),
      `${t(r, 50).held} / ${t(r, 50).supersededForCurrent}`,
      perK((k) => opsCell(r, k)),
      perK((k) => num(p(r, k, 50))),
      perK((k) => num(p(r, k, 95))),
    ]);
    const s = dataset.stats;
    out(`# Governed retrieval benchmark`);
    out();
    out(
      `${dataset.byId.size.toLocaleString('en-US')} memories (${indexed.toLocaleString('en-US')} indexed), ${TENANTS} tenants × ${PRINCIPALS} principals, ` +
        `${embedder.dims}-d ${embedder.model} embedder; ${s.superseded} superseded, ${s.deleted} deleted before purge ` +
        `(index: ${s.deletedStatusInIndex} status deleted, ${s.deletedStale} stale status, ${s.deletedAbsent} absent), ${s.held} held.`,
    );
    out(
      `${queries.length} queries (${historyQueries} history intent, ${queries.length - historyQueries} current), ` +
        `${anchorsPerQuery.toFixed(2)} anchors/query, ${WARMUP} warm-up; post-filter depth ${POST_FILTER_DEPTH}; seed ${SEED}.`,
    );
    out(
      `Load ${(loadMs / 1000).toFixed(1)} s, measured queries ${(measureMs / 1000).toFixed(1)} s, wall ${((performance.now() - wallStart) / 1000).toFixed(1)} s; load avg ${load()}.`,
    );
    out();
    out(markdownTable(header, rows));
    out();
    out(
      `Lethe: ${(lethe.candidates / Math.max(1, lethe.calls)).toFixed(1)} candidates judged per call, ` +
        `${lethe.short} of ${lethe.calls} answers short (fewer than k admissible within the refill depth).`,
    );
    out(
      `Feasible: all ⌈${TAU}·n⌉ required anchors (n = 1–3, so every anchor) within the top k, and no inadmissible ` +
        `record in the matched prefix (the shortest prefix reaching that recall). Exposure: inadmissible returned items / ` +
        `returned items (judge() ≠ 1 for the asker, or gone from MongoDB). Vector ops: ES profile ` +
        `dfs.knn[].vector_operations_count summed over every kNN search the route sent (refill rounds included).`,
    );
    const missingOps = [...vectorOps.values()].some((v) => v.missing > 0);
    if (missingOps) out(`* some kNN searches reported no vector_operations_count in their profile.`);
    out();
    const calls = clock.totals.get('whole call')?.calls ?? 0;
    out(
      `Lethe's time by stage, mean ms per call over ${calls} calls (all k); the index search includes the embedding:`,
    );
    out();
    out(
      markdownTable(
        ['stage', 'ms per call', 'calls per call'],
        [...clock.totals].map(([stage, v]) => [
          stage,
          num(v.ms / Math.max(1, calls)),
          (v.calls / Math.max(1, calls)).toFixed(2),
        ]),
      ),
    );
    out();

    // ── Ratios and targets ──
    const targets: [string, boolean, string][] = [];
    const ws = KS.map((k) => t(LETHE, k).wrongScope).reduce((a, b) => a + b, 0);
    const del = KS.map((k) => t(LETHE, k).deleted).reduce((a, b) => a + b, 0);
    targets.push(['zero wrong-scope exposure (Lethe, every k)', ws === 0, `${ws} items`]);
    targets.push(['zero deleted-record exposure (Lethe, every k)', del === 0, `${del} items`]);
    const recallRatios = KS.map((k) => recall(LETHE, k) / recall('global hybrid + post-filter', k));
    targets.push([
      'recall ≥ post-filtered (every k)',
      KS.every((k) => recall(LETHE, k) >= recall('global hybrid + post-filter', k)),
      `Lethe / post-filtered recall ${perK((k) => ratio(recallRatios[KS.indexOf(k)]!))}`,
    ]);
    const opsRatios = KS.map((k) => ops(LETHE, k) / ops('global dense kNN', k));
    targets.push([
      '≤ 1/50 of global vector ops (vs global dense kNN, every k)',
      opsRatios.every((x) => Number.isFinite(x) && x <= 1 / 50),
      `Lethe / global kNN vector ops ${perK((k) => ratio(opsRatios[KS.indexOf(k)]!))}; ` +
        `vs global hybrid ${perK((k) => ratio(ops(LETHE, k) / ops('global hybrid RRF', k)))}`,
    ]);
    const p95Ratios = KS.map((k) => p(LETHE, k, 95) / p('global BM25', k, 95));
    targets.push([
      'p95 ≤ 1.25× unfiltered BM25 p95 (every k)',
      p95Ratios.every((x) => x <= 1.25),
      `Lethe p95 / BM25 p95 ${perK((k) => ratio(p95Ratios[KS.indexOf(k)]!))}`,
    ]);
    out(
      markdownTable(
        ['target', 'met', 'figures (k = 10 / 20 / 50)'],
        targets.map(([n, ok, f]) => [n, ok ? 'yes' : 'NO', f]),
      ),
    );
  } finally {
    for (const tenant of tenants)
      await index.dropTenant(tenant).catch((e: unknown) => progress(`drop ${tenant}: ${String(e)}`));
    await runtime.db.dropDatabase().catch((e: unknown) => progress(`drop database: ${String(e)}`));
    await runtime.close();
  }
}

await runBench(main);
