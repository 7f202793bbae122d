/**
 * Vector operations of filtered kNN by filter selectivity, and by index layout (`npm run bench:vector-selectivity`,
 * or `npx tsx bench/vector-selectivity.bench.ts` with the stack up).
 *
 * The dataset of `bench:retrieval` (bench/lib/retrieval-dataset.ts, seed 003's shape): BENCH_VSEL_MEMORIES (default
 * 10 000) memories over BENCH_VSEL_TENANTS (4) tenants of BENCH_VSEL_PRINCIPALS (20) principals, owner scope
 * `principal:<id>` or `tenant`; BENCH_VSEL_QUERIES (50) queries, each asked by one principal, after
 * BENCH_VSEL_WARMUP (5) warm-up queries. Every record is embedded once with the configured embedder and the same
 * documents are written, with `_bulk` and one refresh, to three layouts:
 *
 *  A. one index per tenant, 1 shard — as Lethe does today;
 *  B. one index per (tenant, owner scope): the shared `tenant` scope and each principal's; a reader's query is one
 *     kNN over its two partitions (`index: [shared, own]`);
 *  C. one index per tenant with N shards (BENCH_VSEL_SHARDS, default `4,8`), each document routed by its owner
 *     scope; a reader's query names `routing: "principal:<id>,tenant"` and keeps the scope filter.
 *
 * Each query is asked top-k for k ∈ {10, 20, 50} with the adapter's kNN settings (`k = rankWindow(k)`,
 * `num_candidates = numCandidates(window)`), under filters of several selectivities on A (the tenant term alone; the
 * reader's scopes; Lethe's whole filter — scopes, sensitivity, the intent's statuses, valid time — as
 * `indexFiltersFor` builds it; 1, 2, 5 and 10 principals' scopes; the shared scope alone) and under the reader's
 * scopes and Lethe's filter on B and C. For each: the matching set (a `_count` with the same filter), the vector
 * operations (`profile: true`, `vector_operations_count` summed over the shards searched, bench/lib/retrieval-profile.ts),
 * the time of the same search without the profile (the query's embedding is made beforehand and not timed; variants
 * interleaved per query, their order rotating) and, for B and C, the overlap of the top k with A's answer under the
 * same filter. BENCH_VSEL_MERGE=1 force-merges every index to one segment before measuring (default: segments as
 * loaded). Indices are named `lethe-bench-<run tag>-vsel-…` and all deleted at the end, also on failure.
 * Tables (markdown) to stdout, progress to stderr.
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { loadConfig } from '../src/config/load-config.js';
import { numCandidates, rankWindow } from '../src/substrate/search/elasticsearch-search-index.js';
import { createEmbedder } from '../src/substrate/search/embedder-factory.js';
import { vectorsOrNull } from '../src/substrate/search/embedder.port.js';
import { memoryIndexMapping, memoryIndexSettings, toIndexDocument } from '../src/substrate/search/index-layout.js';
import { buildFilterClauses } from '../src/substrate/search/search-filters.js';
import { principalScope } from '../src/substrate/model/records.js';
import { mapBounded } from '../src/substrate/mongo/collections.js';
import { indexFiltersFor } from '../src/retrieval/reader-filters.js';
import { generateDataset, RETRIEVAL_SHARES, type BenchQuery, type TenantData } from './lib/retrieval-dataset.js';
import { accessOf } from './lib/retrieval-metrics.js';
import { vectorOperations } from './lib/retrieval-profile.js';
import { loadAverage, markdownTable, num, percentile, ratio } from './lib/stack-report.js';
import { benchName, envInt, runBench } from './lib/bench-run.js';

const MEMORIES = envInt('BENCH_VSEL_MEMORIES', 10_000);
const QUERIES = envInt('BENCH_VSEL_QUERIES', 50);
const TENANTS = envInt('BENCH_VSEL_TENANTS', 4);
const PRINCIPALS = envInt('BENCH_VSEL_PRINCIPALS', 20);
const WARMUP = envInt('BENCH_VSEL_WARMUP', 5);
const SEED = envInt('BENCH_VSEL_SEED', 3);
const MERGE = envInt('BENCH_VSEL_MERGE', 0) === 1;
const SHARDS = (process.env.BENCH_VSEL_SHARDS || '4,8').split(',').map((s) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error('BENCH_VSEL_SHARDS must list shard counts in [1, 64]');
  return n;
});
/** Principals whose scopes the selectivity filters admit: the asker's and the next ones of its tenant. */
const WIDTHS = [1, 2, 5, 10].filter((n) => n <= PRINCIPALS);
const KS = [10, 20, 50] as const;
type K = (typeof KS)[number];
const BULK = 500;

const progress = (message: string) => process.stderr.write(`bench:vector-selectivity: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);

type Clause = estypes.QueryDslQueryContainer;
/** Where one variant searches for one query, and under which filter. */
interface Target {
  index: string | string[];
  routing?: string;
  filter: Clause[];
}
interface Variant {
  name: string;
  layout: 'A' | 'B' | 'C';
  /** Indices (shards) a tenant holds in this layout. */
  shape: string;
  /** The A variant asked under the same filter, whose answer is the reference for overlap. */
  reference?: string;
  target(q: BenchQuery): Target;
}

interface Measures {
  matching: number[];
  shards: number[];
  ops: Record<K, number[]>;
  ms: Record<K, number[]>;
  overlap: Record<K, number[]>;
  /** Profiled searches of a non-empty matching set whose profile gave no count. */
  missing: number;
}
const emptyMeasures = (): Measures => ({
  matching: [],
  shards: [],
  ops: { 10: [], 20: [], 50: [] },
  ms: { 10: [], 20: [], 50: [] },
  overlap: { 10: [], 20: [], 50: [] },
  missing: 0,
});
const mean = (xs: readonly number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

/** Index names may not hold `:`: a scope becomes `shared` or `p-<principal>`. */
const partOf = (scope: string) => (scope === 'tenant' ? 'shared' : `p-${scope.slice('principal:'.length)}`);

/** The reader's scopes, and the scopes of `n` principals of its tenant starting with the reader. */
const readerScopes = (q: BenchQuery) => [principalScope(q.principal), 'tenant'];
function widthScopes(data: TenantData, q: BenchQuery, n: number): string[] {
  const at = data.principals.indexOf(q.principal);
  return Array.from({ length: n }, (_, i) => principalScope(data.principals[(at + i) % data.principals.length]!));
}
const scopeFilter = (q: BenchQuery, scopes: string[]): Clause[] => [
  { term: { tenant: q.tenant } },
  { terms: { scope: scopes } },
];
/** Lethe's filter for the reader (the adapter's clauses); without the scope part when `scoped` is false. */
function letheFilter(q: BenchQuery, scoped: boolean): Clause[] {
  const filters = indexFiltersFor(accessOf(q));
  if (!scoped) filters.grants = filters.grants?.map((g) => ({ sensitivities: g.sensitivities }));
  return buildFilterClauses(q.tenant, filters);
}

/** The index names of each layout: A's per tenant, B's per (tenant, scope), C's per (shard count, tenant). */
function indexNames(base: string) {
  return {
    a: (t: string) => `${base}-a-${t}`,
    b: (t: string, scope: string) => `${base}-b-${t}-${partOf(scope)}`,
    c: (n: number, t: string) => `${base}-c${n}-${t}`,
  };
}

function variants(base: string, byTenant: Map<string, TenantData>): Variant[] {
  const { a, b, c } = indexNames(base);
  const list: Variant[] = [
    {
      name: 'A unfiltered',
      layout: 'A',
      shape: '1 × 1',
      target: (q) => ({ index: a(q.tenant), filter: [{ term: { tenant: q.tenant } }] }),
    },
    {
      name: "A Lethe's filter",
      layout: 'A',
      shape: '1 × 1',
      target: (q) => ({ index: a(q.tenant), filter: letheFilter(q, true) }),
    },
    {
      name: "A reader's scopes",
      layout: 'A',
      shape: '1 × 1',
      target: (q) => ({ index: a(q.tenant), filter: scopeFilter(q, readerScopes(q)) }),
    },
    ...WIDTHS.map((n): Variant => ({
      name: `A ${n} principal${n === 1 ? '' : 's'}' scopes`,
      layout: 'A',
      shape: '1 × 1',
      target: (q) => ({ index: a(q.tenant), filter: scopeFilter(q, widthScopes(byTenant.get(q.tenant)!, q, n)) }),
    })),
    {
      name: 'A shared scope',
      layout: 'A',
      shape: '1 × 1',
      target: (q) => ({ index: a(q.tenant), filter: scopeFilter(q, ['tenant']) }),
    },
    {
      name: 'B own + shared partitions',
      layout: 'B',
      shape: `${PRINCIPALS + 1} × 1`,
      reference: "A reader's scopes",
      target: (q) => ({
        index: [b(q.tenant, 'tenant'), b(q.tenant, principalScope(q.principal))],
        filter: [{ term: { tenant: q.tenant } }],
      }),
    },
    {
      name: "B partitions + Lethe's filter (no scope)",
      layout: 'B',
      shape: `${PRINCIPALS + 1} × 1`,
      reference: "A Lethe's filter",
      target: (q) => ({
        index: [b(q.tenant, 'tenant'), b(q.tenant, principalScope(q.principal))],
        filter: letheFilter(q, false),
      }),
    },
  ];
  for (const n of SHARDS) {
    list.push(
      {
        name: `C${n} routed + reader's scopes`,
        layout: 'C',
        shape: `1 × ${n}`,
        reference: "A reader's scopes",
        target: (q) => ({
          index: c(n, q.tenant),
          routing: readerScopes(q).join(','),
          filter: scopeFilter(q, readerScopes(q)),
        }),
      },
      {
        name: `C${n} routed + Lethe's filter`,
        layout: 'C',
        shape: `1 × ${n}`,
        reference: "A Lethe's filter",
        target: (q) => ({ index: c(n, q.tenant), routing: readerScopes(q).join(','), filter: letheFilter(q, true) }),
      },
    );
  }
  return list;
}

/** The indices of each layout for one tenant: name, shards, and which documents go there (and their routing). */
interface Layout {
  index: string;
  shards: number;
  layout: 'A' | 'B' | 'C';
  accepts(scope: string): boolean;
  routed: boolean;
}
function layoutsOf(base: string, data: TenantData): Layout[] {
  const t = data.tenant;
  const { a, b, c } = indexNames(base);
  const scopes = ['tenant', ...data.principals.map(principalScope)];
  return [
    { index: a(t), shards: 1, layout: 'A', accepts: () => true, routed: false },
    ...scopes.map((scope): Layout => ({
      index: b(t, scope),
      shards: 1,
      layout: 'B',
      accepts: (s) => s === scope,
      routed: false,
    })),
    ...SHARDS.map((n): Layout => ({
      index: c(n, t),
      shards: n,
      layout: 'C',
      accepts: () => true,
      routed: true,
    })),
  ];
}

async function createIndex(es: Client, layout: Layout, dims: number, model: string): Promise<void> {
  await es.indices.create({
    index: layout.index,
    // No refresh while loading: every layout gets its segments from the same single refresh.
    settings: memoryIndexSettings({ 'index.number_of_shards': layout.shards, 'index.refresh_interval': -1 }),
    mappings: memoryIndexMapping(dims, model),
  });
}

async function bulkLoad(
  es: Client,
  layout: Layout,
  docs: readonly { id: string; scope: string; doc: object }[],
): Promise<number> {
  const mine = docs.filter((d) => layout.accepts(d.scope));
  for (let i = 0; i < mine.length; i += BULK) {
    const operations = mine
      .slice(i, i + BULK)
      .flatMap((d) => [{ index: { _id: d.id, ...(layout.routed ? { routing: d.scope } : {}) } }, d.doc]);
    const response = await es.bulk({ index: layout.index, operations });
    if (response.errors) {
      const failed = response.items.find((item) => item.index?.error)?.index?.error;
      throw new Error(`bulk into ${layout.index}: ${failed?.type ?? 'unknown'}: ${failed?.reason ?? ''}`);
    }
  }
  return mine.length;
}

/** A request naming many indices, sent for 40 at a time: their names go in the URL, whose line ES caps at 4 KB. */
async function inChunks(names: readonly string[], request: (names: string[]) => Promise<unknown>): Promise<void> {
  for (let at = 0; at < names.length; at += 40) await request(names.slice(at, at + 40));
}

const idsOf = (response: estypes.SearchResponse) =>
  response.hits.hits.map((h) => h._id).filter((id): id is string => typeof id === 'string');

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const es = new Client({ node: config.elasticsearch.url, requestTimeout: 120_000 });
  const embedder = createEmbedder(config.embedder);
  const base = `lethe-${benchName('vsel')}`;
  const loadAtStart = loadAverage();
  const started = new Date();
  const info = await es.info();
  progress(`Elasticsearch ${info.version.number} (Lucene ${info.version.lucene_version}); load ${loadAtStart}`);

  const dataset = generateDataset({
    memories: MEMORIES,
    queries: QUERIES + WARMUP,
    tenants: TENANTS,
    principalsPerTenant: PRINCIPALS,
    seed: SEED,
    ...RETRIEVAL_SHARES,
  });
  const byTenant = new Map(dataset.tenants.map((t) => [t.tenant, t]));
  const created: string[] = [];
  try {
    // ── Embed once, write the same documents to every layout ──
    const layoutsByTenant = new Map(dataset.tenants.map((t) => [t.tenant, layoutsOf(base, t)]));
    const layouts = [...layoutsByTenant.values()].flat();
    const embedStart = performance.now();
    const docsOf = new Map<string, { id: string; scope: string; doc: object }[]>();
    for (const t of dataset.tenants) {
      const docs: { id: string; scope: string; doc: object }[] = [];
      for (let i = 0; i < t.indexed.length; i += 256) {
        const slice = t.indexed.slice(i, i + 256);
        const vectors = await vectorsOrNull(
          embedder,
          slice.map((r) => r.content),
        );
        slice.forEach((r, j) =>
          docs.push({ id: r._id, scope: r.scope ?? 'tenant', doc: toIndexDocument(r, vectors[j] ?? null) }),
        );
      }
      docsOf.set(t.tenant, docs);
      progress(`embedded ${t.tenant}: ${docs.length} documents (load ${loadAverage()})`);
    }
    const embedMs = performance.now() - embedStart;
    const loadStart = performance.now();
    await mapBounded(layouts, 4, async (layout) => {
      created.push(layout.index);
      await createIndex(es, layout, embedder.dims, embedder.model);
    });
    for (const t of dataset.tenants)
      for (const layout of layoutsByTenant.get(t.tenant)!) await bulkLoad(es, layout, docsOf.get(t.tenant)!);
    await inChunks(created, (index) => es.indices.refresh({ index }));
    await inChunks(created, (index) => es.indices.putSettings({ index, settings: { 'index.refresh_interval': null } }));
    if (MERGE) {
      for (const index of created) await es.indices.forcemerge({ index, max_num_segments: 1 });
      await inChunks(created, (index) => es.indices.refresh({ index }));
    }
    const loadMs = performance.now() - loadStart;
    progress(
      `${created.length} indices loaded in ${(loadMs / 1000).toFixed(1)} s (embedding ${(embedMs / 1000).toFixed(1)} s); load ${loadAverage()}`,
    );
    const segmentsOf = async () => {
      const stats: Record<string, estypes.IndicesStatsIndicesStats> = {};
      await inChunks(created, async (index) =>
        Object.assign(stats, (await es.indices.stats({ index, metric: 'segments' })).indices),
      );
      const per: Record<string, number> = { A: 0, B: 0, C: 0 };
      for (const layout of layouts) {
        const key = layout.layout === 'C' ? `C${layout.shards}` : layout.layout;
        per[key] = (per[key] ?? 0) + (stats[layout.index]?.primaries?.segments?.count ?? 0);
      }
      return per;
    };
    const segmentsBefore = await segmentsOf();

    // ── Measure ──
    const all = variants(base, byTenant);
    const measures = new Map(all.map((v) => [v.name, emptyMeasures()]));
    const vectorOf = new Map<BenchQuery, number[] | null>();
    for (const q of dataset.queries) vectorOf.set(q, (await vectorsOrNull(embedder, [q.text]))[0]!);
    const asked = dataset.queries.filter((q) => vectorOf.get(q) !== null);
    const warmup = asked.slice(0, WARMUP);
    const queries = asked.slice(WARMUP);

    const search = (v: Variant, q: BenchQuery, k: K, profile: boolean) => {
      const { index, routing, filter } = v.target(q);
      const window = rankWindow(k);
      return es.search({
        index,
        ...(routing ? { routing } : {}),
        size: window,
        _source: false,
        track_total_hits: false,
        knn: {
          field: 'embedding',
          query_vector: vectorOf.get(q)!,
          k: window,
          num_candidates: numCandidates(window),
          filter,
        },
        ...(profile ? { profile: true } : {}),
      });
    };
    for (const q of warmup) for (const v of all) for (const k of KS) await search(v, q, k, false);

    const measureStart = performance.now();
    for (const [i, q] of queries.entries()) {
      const answers = new Map<string, string[]>();
      for (let j = 0; j < all.length; j++) {
        const v = all[(i + j) % all.length]!;
        const m = measures.get(v.name)!;
        const { index, routing, filter } = v.target(q);
        const count = await es.count({ index, ...(routing ? { routing } : {}), query: { bool: { filter } } });
        m.matching.push(count.count);
        for (const k of KS) {
          const start = performance.now();
          const response = await search(v, q, k, false);
          m.ms[k].push(performance.now() - start);
          answers.set(`${v.name}@${k}`, idsOf(response).slice(0, k));
          const profiled = await search(v, q, k, true);
          // No count in the profile: the filter matched nothing, and no vector was compared.
          const ops = vectorOperations(profiled);
          if (ops === null && count.count > 0) m.missing++;
          m.ops[k].push(ops ?? 0);
          if (k === KS[0]) m.shards.push(profiled._shards.total);
        }
      }
      for (const v of all) {
        if (!v.reference) continue;
        for (const k of KS) {
          const mine = new Set(answers.get(`${v.name}@${k}`));
          const reference = answers.get(`${v.reference}@${k}`)!;
          const shared = reference.filter((id) => mine.has(id)).length;
          measures.get(v.name)!.overlap[k].push(reference.length === 0 ? 1 : shared / reference.length);
        }
      }
      if ((i + 1) % 10 === 0 || i + 1 === queries.length) {
        const elapsed = performance.now() - measureStart;
        progress(`queries ${i + 1}/${queries.length}, ${(elapsed / 1000).toFixed(0)} s (load ${loadAverage()})`);
      }
    }
    const segmentsAfter = await segmentsOf();
    const loadAtEnd = loadAverage();

    // ── Report ──
    const perK = (f: (k: K) => string) => KS.map(f).join(' / ');
    const ops = (name: string, k: K) => mean(measures.get(name)!.ops[k]);
    const unfiltered = 'A unfiltered';
    const tenantSize = mean(dataset.tenants.map((t) => docsOf.get(t.tenant)!.length));
    const matching = (name: string) => mean(measures.get(name)!.matching);
    const s = dataset.stats;
    out('# Vector operations of filtered kNN, by selectivity and layout');
    out();
    out(
      `${started.toISOString().slice(0, 16)} UTC; Elasticsearch ${info.version.number} (Lucene ${info.version.lucene_version}); ` +
        `load average ${loadAtStart} at the start, ${loadAtEnd} at the end.`,
    );
    out(
      `${dataset.byId.size.toLocaleString('en-US')} memories, ${TENANTS} tenants × ${PRINCIPALS} principals, ` +
        `${num(tenantSize)} indexed documents a tenant (${s.superseded} superseded, ${s.deleted} deleted before purge); ` +
        `${embedder.dims}-d \`${embedder.model}\` embedder; ${queries.length} queries (${queries.filter((q) => q.intent === 'history').length} with history intent) ` +
        `after ${warmup.length} warm-up; k = ${KS.join(' / ')}, kNN k = ${perK((k) => String(rankWindow(k)))}, ` +
        `num_candidates = ${perK((k) => String(numCandidates(rankWindow(k))))}.`,
    );
    out(
      `Segments (primaries, all tenants) before / after measuring: ` +
        Object.keys(segmentsBefore)
          .map((key) => `${key} ${segmentsBefore[key]} / ${segmentsAfter[key]}`)
          .join(', ') +
        (MERGE ? ' (force-merged to one segment per shard).' : ' (as loaded: one refresh after the bulk load).'),
    );
    const missing = all.filter((v) => measures.get(v.name)!.missing > 0);
    if (missing.length > 0)
      out(
        `Profiles without a vector count (counted as 0): ` +
          missing.map((v) => `${v.name} ${measures.get(v.name)!.missing}`).join(', '),
      );
    out();
    out('## Layout A (one index per tenant, 1 shard): vector operations by filter selectivity');
    out();
    out(
      markdownTable(
        [
          'filter',
          'matching docs (share of tenant)',
          'ops/query @10/20/50',
          'ops ÷ matching @10/20/50',
          'ratio to unfiltered @10/20/50',
        ],
        all
          .filter((v) => v.layout === 'A')
          .map((v) => [
            v.name.slice(2),
            `${num(matching(v.name))} (${((100 * matching(v.name)) / tenantSize).toFixed(1)} %)`,
            perK((k) => num(ops(v.name, k))),
            perK((k) => num(ops(v.name, k) / matching(v.name))),
            perK((k) => ratio(ops(v.name, k) / ops(unfiltered, k))),
          ]),
      ),
    );
    out();
    out('## Layouts side by side: partitions (B) and routing (C) against one index (A)');
    out();
    out(
      markdownTable(
        [
          'variant',
          'indices × shards a tenant',
          'shards searched',
          'matching docs',
          'ops/query @10/20/50',
          'ratio to A unfiltered @10/20/50',
          'ratio to A, same filter @10/20/50',
          'overlap with A @10/20/50',
        ],
        all
          .filter(
            (v) =>
              v.layout !== 'A' ||
              v.name === unfiltered ||
              v.name === "A reader's scopes" ||
              v.name === "A Lethe's filter",
          )
          .map((v) => {
            const m = measures.get(v.name)!;
            const reference = v.reference ?? v.name;
            return [
              v.name,
              v.shape,
              num(mean(m.shards)),
              num(matching(v.name)),
              perK((k) => num(ops(v.name, k))),
              perK((k) => ratio(ops(v.name, k) / ops(unfiltered, k))),
              v.reference ? perK((k) => ratio(ops(v.name, k) / ops(reference, k))) : '—',
              v.reference ? perK((k) => mean(m.overlap[k]).toFixed(3)) : '(reference)',
            ];
          }),
      ),
    );
    out();
    out('## Time per search (ms, profile off, embedding not included)');
    out();
    out(
      markdownTable(
        ['variant', 'p50 @10/20/50', 'p95 @10/20/50'],
        all.map((v) => {
          const m = measures.get(v.name)!;
          return [v.name, perK((k) => num(percentile(m.ms[k], 50))), perK((k) => num(percentile(m.ms[k], 95)))];
        }),
      ),
    );
  } finally {
    await inChunks(created, (index) =>
      es.indices
        .delete({ index, ignore_unavailable: true })
        .catch((e: unknown) => progress(`delete indices: ${String(e)}`)),
    );
    progress(`deleted ${created.length} indices`);
    await es.close();
  }
}

await runBench(main);
