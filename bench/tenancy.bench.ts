/**
 * Two tenancy layouts of the memory index, measured side by side on the local Elasticsearch:
 *
 * - per-index: one index per tenant, what Lethe does today (`src/substrate/search/index-layout.ts`: one shard,
 *   `memoryIndexSettings()`, `memoryIndexMapping(dims)`, an alias per tenant);
 * - shared: one index of `--shared-shards` primaries (same settings and mapping) holding every tenant, and one
 *   alias per tenant with `filter: {term: {tenant}}` and `routing: tenant`.
 *
 * At each tenant count (`--tenants`, default 200,2000), each layout in turn, it measures:
 * - creating every tenant's index or alias (a few requests in flight), the layout's shard count, and the node's JVM
 *   heap from `_nodes/stats/jvm` before creation (once it has stopped falling), after it and after loading, each
 *   right after a full collection (`jcmd <pid> GC.run` when the node runs on this machine; else the lowest of three
 *   samples, garbage included);
 * - loading `--docs` documents per tenant, 384-d vectors from the project's hashing embedder, with `_bulk` through
 *   the aliases (500 documents a request) and one refresh;
 * - `--searches` hybrid searches against random tenants, as Lethe sends them: one `_msearch` of a BM25 `match` on
 *   the content and a `knn` on the embedding, both through the tenant's alias with no other tenant filter, fused in
 *   the client; a hit of another tenant is counted (it must stay 0);
 * - erasing `--erasures` tenants' documents the way Lethe's erasure does: delete (`_delete_by_query` through the
 *   alias where the node serves it, else `_bulk` deletes by id) and refresh; the expunge of `expungeDeleted`
 *   (refresh, settings, force merge with `only_expunge_deletes`, refresh, flush) at once, and again once the
 *   shard's retention lease has passed the deletes (until then soft deletes keep the documents in the segments);
 *   then dropping the tenant (its index, or its alias).
 *
 * On one node, one index per tenant meets `cluster.max_shards_per_node` (1 000 by default) before 2 000 tenants: the
 * bench records the refusal, raises the limit with a transient cluster setting to finish the measurement, and puts
 * the setting back at the end. When the node's heap stays above 85 % a size stops there; creation stops after
 * 15 min; both are reported. Everything it creates is named `benchten-<random>-…` and deleted at the end, also on
 * failure or Ctrl-C. It does not use `runBench`: it touches Elasticsearch only, and nothing outside its own prefix.
 *
 * `npm run bench:tenancy [-- --tenants 200,2000] [--docs 20] [--searches 300] [--erasures 3] [--shared-shards 4]`
 * (about 13 minutes at the defaults on 2 cores; it loads the node, so run it alone).
 * Markdown tables go to stdout, progress to stderr.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { Client, errors, type estypes } from '@elastic/elasticsearch';
import { loadStackConfig } from '../stack/stack-config.js';
import { numCandidates, rankWindow } from '../src/substrate/search/elasticsearch-search-index.js';
import { createHashingEmbedder } from '../src/substrate/search/hashing-embedder.js';
import {
  INDEX_VERSION,
  memoryIndexMapping,
  memoryIndexSettings,
  tenantIndexNames,
  type MemoryIndexDocument,
} from '../src/substrate/search/index-layout.js';
import { reciprocalRankFusion } from '../src/substrate/search/rrf.js';
import { rng } from './lib/substrate-measure.js';
import { loadAverage, markdownTable, median, num, percentile, ratio, timed } from './lib/stack-report.js';

const { values: args } = parseArgs({
  options: {
    tenants: { type: 'string', default: '200,2000' },
    docs: { type: 'string', default: '20' },
    searches: { type: 'string', default: '300' },
    erasures: { type: 'string', default: '3' },
    'shared-shards': { type: 'string', default: '4' },
  },
});

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, got "${value}"`);
  return n;
}

const TENANT_COUNTS = args.tenants.split(',').map((t) => positiveInt(t.trim(), 'tenants'));
if (TENANT_COUNTS.some((n) => n > 9999)) throw new Error('--tenants: at most 9999 (tenant ids have four digits)');
/** Documents per tenant: a tenant's first memories; small, so that the fixed cost of a tenant shows. */
const DOCS = positiveInt(args.docs, 'docs');
const SEARCHES = positiveInt(args.searches, 'searches');
const ERASURES = positiveInt(args.erasures, 'erasures');
/**
 * Primaries of the shared index. A routed search reads one shard whatever the count, so shards buy no search
 * parallelism on one node; what they bound is the work of an erasure, since the expunge rewrites segments of the one
 * shard holding the tenant (a quarter of the documents with 4), and they leave room to spread over a few nodes later.
 * Each primary is fixed overhead like one tenant's index, so a handful, not dozens: 4 by default.
 */
const SHARED_SHARDS = positiveInt(args['shared-shards'], 'shared-shards');
/** The dimension of the production model (minilm); the hashing embedder produces any. */
const DIMS = 384;
/** Lethe's search k; the rank window and HNSW candidates follow from it as in the adapter. */
const K = 10;
const WARMUP = 30;
/** Lethe's `_bulk` chunk; whole tenants per request, as onboarding would write them. */
const BULK_DOCS = 500;
const TENANTS_PER_BULK = Math.max(1, Math.floor(BULK_DOCS / DOCS));
/** Creations in flight: the master batches concurrent cluster-state updates, as it would for a busy API. */
const CREATE_CONCURRENCY = 4;
const HEAP_LIMIT_PCT = 85;
const CREATE_BUDGET_MS = 15 * 60_000;
/** The lease syncs every 30 s by default; a little more than two periods before giving up. */
const LEASE_WAIT_MS = 75_000;
/** As the adapter: a merge of a large index outlasts the client's default timeout. */
const MERGE_TIMEOUT_MS = 10 * 60_000;
const SHARD_LIMIT = 'cluster.max_shards_per_node';
const MIB = 1024 * 1024;

const stack = loadStackConfig();
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
if (!LOOPBACK.has(stack.elasticsearch.host)) {
  throw new Error(
    `bench:tenancy runs against the local stack only; ELASTICSEARCH_URL points at ${stack.elasticsearch.host}`,
  );
}
const client = new Client({ node: stack.elasticsearch.url, requestTimeout: 120_000 });
const embedder = createHashingEmbedder({ dims: DIMS });
/** Every index and alias of this run starts with it, so cleanup never reaches anything else. */
const RUN_PREFIX = `benchten-${randomBytes(3).toString('hex')}`;

const progress = (message: string) => process.stderr.write(`bench:tenancy: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);
const clock = () => new Date().toISOString().slice(11, 19);

// Deterministic pseudo-random numbers (`rng`), so both layouts get the same documents, queries and victims.
const VOCAB = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}x`);
const NAMESPACES = ['crm', 'support', 'billing', 'hr', 'legal', 'sales', 'ops', 'product'];

const tenantId = (n: number) => `t${String(n).padStart(4, '0')}`;
const tenantNo = (tenant: string) => Number(tenant.slice(1));
/** The tenant is in the id, so a hit's tenant is known without fetching `_source`. */
const docId = (tenant: string, i: number) => `${tenant}-m${i}`;

function contentOf(tenant: string, i: number): string {
  const random = rng(tenantNo(tenant) * 1000 + i + 1);
  // Zipf-like: low word ids are frequent, as in natural text.
  const words = 20 + Math.floor(random() * 40);
  return Array.from({ length: words }, () => VOCAB[Math.floor(VOCAB.length * random() ** 3)]!).join(' ');
}

async function tenantDocuments(tenants: readonly string[]): Promise<{ id: string; doc: MemoryIndexDocument }[]> {
  const plain = tenants.flatMap((tenant) =>
    Array.from({ length: DOCS }, (_, i) => {
      const at = new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString();
      const doc: MemoryIndexDocument = {
        memoryId: docId(tenant, i),
        tenant,
        namespace: NAMESPACES[i % NAMESPACES.length]!,
        subjects: [`s-${i % 7}`],
        contentHash: `h-${tenant}-${i}`,
        kind: 'fact',
        status: 'active',
        principal: 'bench',
        purpose: 'support',
        sensitivity: 'internal',
        jurisdiction: 'EU',
        retentionClass: 'standard',
        validFrom: at,
        recordedAt: at,
        trustTier: 2,
        confidence: 0.8,
        content: contentOf(tenant, i),
      };
      return { id: docId(tenant, i), doc };
    }),
  );
  const vectors = await embedder.embed(plain.map((p) => p.doc.content));
  plain.forEach((p, i) => (p.doc.embedding = vectors[i]!));
  return plain;
}

/** What an Elasticsearch refusal says: HTTP status, error type and reason. */
interface EsFailure {
  status: number | undefined;
  type: string;
  reason: string;
}

function esFailure(error: unknown): EsFailure {
  if (error instanceof errors.ResponseError) {
    const body = error.body as { error?: { type?: string; reason?: string } | string } | undefined;
    const detail = typeof body?.error === 'object' ? body.error : undefined;
    const plain = typeof body?.error === 'string' ? body.error : undefined;
    return {
      status: error.statusCode,
      type: detail?.type ?? (plain !== undefined ? '(no type: plain message)' : error.name),
      reason: detail?.reason ?? plain ?? error.message,
    };
  }
  return {
    status: undefined,
    type: error instanceof Error ? error.name : 'unknown',
    reason: error instanceof Error ? error.message : String(error),
  };
}

const describe = (f: EsFailure) => `${f.status ?? 'no status'} ${f.type}: ${f.reason.slice(0, 220)}`;

/** Raised when the node's heap stays above the limit: the current size stops and is cleaned up. */
class HeapStop extends Error {}

interface Heap {
  usedPct: number;
  used: number;
  max: number;
}

async function heapNow(): Promise<Heap> {
  const stats = await client.nodes.stats({ metric: 'jvm' });
  // One node on the local stack; with more, the fullest one is the one that fails first.
  const heaps = Object.values(stats.nodes).map((node): Heap => {
    const mem = node.jvm?.mem;
    return {
      usedPct: mem?.heap_used_percent ?? NaN,
      used: mem?.heap_used_in_bytes ?? NaN,
      max: mem?.heap_max_in_bytes ?? NaN,
    };
  });
  return heaps.sort((a, b) => b.usedPct - a.usedPct)[0]!;
}

/**
 * The node's process when it runs on this machine and `jcmd` can attach to it: heap used is mostly garbage until a
 * collection runs (a 1 GiB heap can sit at 60 % with 40 MiB live), so figures are taken after a full collection.
 */
let nodePid: number | null = null;
const execFileAsync = promisify(execFile);

async function findNodePid(): Promise<void> {
  const info = await client.nodes.info({ metric: 'process' });
  const pids = Object.values(info.nodes).map((node) => node.process?.id);
  const pid = pids.length === 1 ? pids[0] : undefined;
  if (pid === undefined) return;
  try {
    await execFileAsync('jcmd', [String(pid), 'VM.version'], { timeout: 30_000 });
    nodePid = pid;
  } catch {
    nodePid = null;
  }
}

async function collectGarbage(): Promise<boolean> {
  if (nodePid === null) return false;
  try {
    await execFileAsync('jcmd', [String(nodePid), 'GC.run'], { timeout: 60_000 });
    // The node caches its JVM figures for `monitor.jvm.refresh_interval` (1 s): read sooner, they predate the GC.
    await sleep(1500);
    return true;
  } catch (error) {
    progress(`jcmd GC.run failed (${error instanceof Error ? error.message : String(error)}); sampling instead`);
    nodePid = null;
    return false;
  }
}

/** Heap that survives a full collection, or without `jcmd` the lowest of three samples a second apart. */
async function liveHeap(): Promise<Heap> {
  if (await collectGarbage()) return heapNow();
  return settledHeap();
}

/**
 * The live heap once it has stopped falling: indices deleted just before (the previous layout's) keep memory for
 * some seconds while their shards close, and would otherwise count against the next layout's growth.
 */
async function baselineHeap(): Promise<Heap> {
  let last = await liveHeap();
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    await sleep(5000);
    const now = await liveHeap();
    if (Math.abs(now.used - last.used) < 4 * MIB) return now;
    last = now;
  }
  return last;
}

async function settledHeap(): Promise<Heap> {
  const samples: Heap[] = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(1000);
    samples.push(await heapNow());
  }
  return samples.sort((a, b) => a.used - b.used)[0]!;
}

/**
 * Stops the size when the heap is above the limit after a full collection, or without `jcmd` for a few seconds in a
 * row (a single high sample is usually garbage).
 */
async function guardHeap(where: string): Promise<void> {
  let heap = await heapNow();
  if (heap.usedPct > HEAP_LIMIT_PCT && (await collectGarbage())) heap = await heapNow();
  for (let i = 0; heap.usedPct > HEAP_LIMIT_PCT; i++) {
    if (i === 3) {
      throw new HeapStop(`heap ${heap.usedPct} % of ${num(heap.max / MIB)} MiB > ${HEAP_LIMIT_PCT} % ${where}`);
    }
    await sleep(1000);
    heap = await heapNow();
  }
}

async function nodeCpuAtRest(): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sleep(1000);
    const stats = await client.nodes.stats({ metric: 'process' });
    samples.push(Object.values(stats.nodes)[0]?.process?.cpu?.percent ?? NaN);
  }
  return median(samples);
}

/** Open shards the way the limit counts them: the whole cluster's, every user's. */
async function clusterShards(): Promise<number> {
  const health = await client.cluster.health();
  return health.active_shards + health.unassigned_shards + health.initializing_shards + health.relocating_shards;
}

async function shardLimitSetting(): Promise<{ value: string; source: string; transient: string | null }> {
  const settings = await client.cluster.getSettings({ include_defaults: true, flat_settings: true });
  const read = (from: Record<string, unknown> | undefined) => {
    const v = from?.[SHARD_LIMIT];
    return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
  };
  const transient = read(settings.transient);
  const persistent = read(settings.persistent);
  const value = transient ?? persistent ?? read(settings.defaults) ?? '1000';
  return { value, source: transient ? 'transient' : persistent ? 'persistent' : 'default', transient };
}

/** Set when this run raised the limit: what to put back (null removes the transient setting). */
let shardLimitRaised: { previous: string | null; to: number } | null = null;

async function raiseShardLimit(to: number): Promise<void> {
  const previous = (await shardLimitSetting()).transient;
  shardLimitRaised ??= { previous, to };
  shardLimitRaised.to = to;
  await client.cluster.putSettings({ transient: { [SHARD_LIMIT]: to } });
  progress(`raised ${SHARD_LIMIT} to ${to} (transient)`);
}

async function resetShardLimit(): Promise<void> {
  if (shardLimitRaised === null) return;
  await client.cluster.putSettings({ transient: { [SHARD_LIMIT]: shardLimitRaised.previous } });
  progress(`reset transient ${SHARD_LIMIT} to ${shardLimitRaised.previous ?? 'null'}`);
  shardLimitRaised = null;
}

const isShardLimit = (f: EsFailure) => f.type === 'validation_exception' && /maximum .*shards open/.test(f.reason);

/** Deletes this run's indices matching `pattern`, by name (wildcard deletes are refused by default). */
async function deleteIndices(pattern: string): Promise<number> {
  if (!pattern.startsWith(`${RUN_PREFIX}-`)) throw new Error(`refusing to delete outside ${RUN_PREFIX}: ${pattern}`);
  const rows = await client.cat.indices({ index: pattern, format: 'json', h: 'index', expand_wildcards: 'all' });
  const names = rows.map((r) => String(r.index)).filter((name) => name.startsWith(`${RUN_PREFIX}-`));
  for (let at = 0; at < names.length; at += 100) {
    await client.indices.delete({ index: names.slice(at, at + 100), ignore_unavailable: true });
  }
  return names.length;
}

/** How the node deletes a tenant's documents: probed once, since the local node lacks `_delete_by_query`. */
let deleteByQuery: { available: true } | { available: false; failure: EsFailure } = { available: true };

async function probeDeleteByQuery(): Promise<void> {
  try {
    await client.deleteByQuery({
      index: `${RUN_PREFIX}-probe`,
      ignore_unavailable: true,
      allow_no_indices: true,
      query: { match_all: {} },
    });
    deleteByQuery = { available: true };
  } catch (error) {
    deleteByQuery = { available: false, failure: esFailure(error) };
  }
}

interface Layout {
  name: 'per-index' | 'shared';
  label: string;
  prefix: string;
  alias(tenant: string): string;
  /** The concrete index holding the tenant's documents: what an erasure expunges. */
  home(tenant: string): string;
  setup(): Promise<void>;
  addTenant(tenant: string): Promise<void>;
  dropTenant(tenant: string): Promise<void>;
  refreshAll(): Promise<void>;
}

function perIndexLayout(prefix: string): Layout {
  return {
    name: 'per-index',
    label: 'per-index',
    prefix,
    alias: (tenant) => tenantIndexNames(prefix, tenant).alias,
    home: (tenant) => tenantIndexNames(prefix, tenant).index,
    setup: () => Promise.resolve(),
    async addTenant(tenant) {
      const { alias, index } = tenantIndexNames(prefix, tenant);
      // The adapter's own request (`ensureTenantIndex`).
      await client.indices.create({
        index,
        aliases: { [alias]: { is_write_index: true } },
        settings: memoryIndexSettings(),
        mappings: memoryIndexMapping(DIMS, embedder.model),
      });
    },
    async dropTenant(tenant) {
      await client.indices.delete({ index: tenantIndexNames(prefix, tenant).index });
    },
    async refreshAll() {
      await client.indices.refresh({ index: `${prefix}-*` });
    },
  };
}

function sharedLayout(prefix: string, shards: number): Layout {
  const index = `${prefix}-shared-v${INDEX_VERSION}`;
  return {
    name: 'shared',
    label: `shared (${shards} shards)`,
    prefix,
    alias: (tenant) => tenantIndexNames(prefix, tenant).alias,
    home: () => index,
    async setup() {
      await client.indices.create({
        index,
        settings: memoryIndexSettings({ 'index.number_of_shards': shards }),
        mappings: memoryIndexMapping(DIMS, embedder.model),
      });
    },
    async addTenant(tenant) {
      // Routing sends the tenant's writes to one shard and its searches to that shard only; the filter isolates it.
      await client.indices.putAlias({
        index,
        name: tenantIndexNames(prefix, tenant).alias,
        filter: { term: { tenant } },
        routing: tenant,
      });
    },
    async dropTenant(tenant) {
      await client.indices.deleteAlias({ index, name: tenantIndexNames(prefix, tenant).alias });
    },
    async refreshAll() {
      await client.indices.refresh({ index });
    },
  };
}

/** One layout at one tenant count: figures by row key, and what to say about them. */
interface Run {
  layout: Layout;
  figures: Map<string, number>;
  notes: string[];
  stopped?: string;
}

async function createTenants(layout: Layout, tenants: readonly string[], run: Run): Promise<string[]> {
  const created: string[] = [];
  let next = 0;
  let stop: string | null = null;
  let raising: Promise<void> | null = null;
  const deadline = performance.now() + CREATE_BUDGET_MS;
  const worker = async (): Promise<void> => {
    try {
      while (stop === null && next < tenants.length) {
        if (performance.now() > deadline) {
          stop = `creation stopped after ${CREATE_BUDGET_MS / 60_000} min`;
          break;
        }
        const tenant = tenants[next++]!;
        try {
          await layout.addTenant(tenant);
        } catch (error) {
          const failure = esFailure(error);
          if (!isShardLimit(failure)) throw error;
          if (!run.figures.has('limitAt')) {
            run.figures.set('limitAt', created.length + 1);
            run.notes.push(
              `tenant ${created.length + 1} of ${tenants.length} refused at ${SHARD_LIMIT} = ` +
                `${(await shardLimitSetting()).value}: ${describe(failure)}`,
            );
            progress(`shard limit reached at tenant ${created.length + 1}: ${describe(failure)}`);
          }
          // Room for the rest of this run and for other users of the node.
          raising ??= (async () =>
            raiseShardLimit((await clusterShards()) + (tenants.length - created.length) + 500))();
          await raising;
          await layout.addTenant(tenant);
        }
        created.push(tenant);
        if (created.length % 100 === 0) {
          progress(`${layout.label}: ${created.length}/${tenants.length} created (load ${loadAverage()})`);
          await guardHeap(`after creating ${created.length} tenants`);
        }
      }
    } catch (error) {
      stop ??= 'error';
      throw error;
    }
  };
  const results = await Promise.allSettled(Array.from({ length: CREATE_CONCURRENCY }, worker));
  run.figures.set('tenants', created.length);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  if (stop !== null) run.notes.push(`${stop}: ${created.length} of ${tenants.length} tenants created`);
  // In id order, not completion order: both layouts then search and erase the same tenants.
  return created.sort();
}

async function load(layout: Layout, tenants: readonly string[]): Promise<{ ms: number; docs: number }> {
  let ms = 0;
  let docs = 0;
  for (let at = 0; at < tenants.length; at += TENANTS_PER_BULK) {
    const batch = await tenantDocuments(tenants.slice(at, at + TENANTS_PER_BULK));
    const operations = batch.flatMap(({ id, doc }) => [{ index: { _index: layout.alias(doc.tenant), _id: id } }, doc]);
    const sent = await timed(() => client.bulk({ operations, require_alias: true }));
    ms += sent.ms;
    const failure = sent.value.items.map((item) => Object.values(item)[0]?.error).find((e) => e !== undefined);
    if (failure) {
      const message = `_bulk: ${failure.type}: ${failure.reason ?? ''}`;
      throw failure.type === 'circuit_breaking_exception' ? new HeapStop(message) : new Error(message);
    }
    docs += batch.length;
    if ((at / TENANTS_PER_BULK) % 20 === 19) {
      progress(`${layout.label}: ${docs} docs loaded (load ${loadAverage()})`);
      await guardHeap(`after loading ${docs} documents`);
    }
  }
  ms += (await timed(() => layout.refreshAll())).ms;
  return { ms, docs };
}

interface Query {
  tenant: string;
  text: string;
  vector: number[];
}

async function queries(tenants: readonly string[], count: number): Promise<Query[]> {
  const random = rng(7);
  const picked = Array.from({ length: count }, () => {
    const tenant = tenants[Math.floor(random() * tenants.length)]!;
    // Words of one of the tenant's memories, so that BM25 has something to find in that tenant.
    const words = contentOf(tenant, Math.floor(random() * DOCS)).split(' ');
    const start = Math.floor(random() * Math.max(1, words.length - 3));
    return { tenant, text: words.slice(start, start + 3).join(' ') };
  });
  const vectors = await embedder.embed(picked.map((p) => p.text));
  return picked.map((p, i) => ({ ...p, vector: vectors[i]! }));
}

interface SearchResult {
  ms: number;
  took: number;
  bm25Hits: number;
  knnHits: number;
  foreign: number;
}

async function hybridSearch(layout: Layout, query: Query): Promise<SearchResult> {
  const index = layout.alias(query.tenant);
  const window = rankWindow(K);
  const common = { size: window, _source: false, track_total_hits: false } as const;
  const searches: estypes.MsearchRequestItem[] = [
    { index },
    { ...common, query: { match: { content: query.text } } },
    { index },
    {
      ...common,
      knn: { field: 'embedding', query_vector: query.vector, k: window, num_candidates: numCandidates(window) },
    },
  ];
  const start = performance.now();
  const response = await client.msearch({ searches });
  const lists = response.responses.map((r) => {
    if ('error' in r) throw new Error(`_msearch: ${r.status} ${r.error.type}: ${r.error.reason ?? ''}`);
    return r.hits.hits.map((h) => h._id ?? '');
  });
  reciprocalRankFusion(lists, { limit: K });
  const ms = performance.now() - start;
  const took = Math.max(...response.responses.map((r) => ('took' in r ? r.took : NaN)));
  const own = `${query.tenant}-m`;
  const foreign = lists.flat().filter((id) => !id.startsWith(own)).length;
  return { ms, took, bm25Hits: lists[0]?.length ?? 0, knnHits: lists[1]?.length ?? 0, foreign };
}

async function deleteTenantDocuments(layout: Layout, tenant: string): Promise<number> {
  const alias = layout.alias(tenant);
  if (deleteByQuery.available) {
    // Through the alias: its filter and routing confine the query to the tenant.
    const response = await client.deleteByQuery({ index: alias, query: { match_all: {} }, refresh: true });
    return response.deleted ?? 0;
  }
  // What the adapter does on a node without it: delete the ids it knows, then refresh.
  const operations = Array.from({ length: DOCS }, (_, i) => ({ delete: { _index: alias, _id: docId(tenant, i) } }));
  const response = await client.bulk({ operations, require_alias: true });
  const deleted = response.items.filter((item) => item.delete?.result === 'deleted').length;
  await client.indices.refresh({ index: alias });
  return deleted;
}

/** The adapter's `expungeDeleted`, on the index holding the tenant. */
async function expunge(index: string): Promise<void> {
  await client.indices.refresh({ index });
  await client.indices.putSettings({ index, settings: { 'index.merge.policy.expunge_deletes_allowed': 0 } });
  await client.indices.forcemerge({ index, only_expunge_deletes: true }, { requestTimeout: MERGE_TIMEOUT_MS });
  await client.indices.refresh({ index });
  await client.indices.flush({ index, wait_if_ongoing: true });
}

async function deletedDocs(index: string): Promise<number> {
  const response = await client.indices.segments({ index });
  let deleted = 0;
  for (const copies of Object.values(response.indices[index]?.shards ?? {})) {
    for (const copy of [copies].flat()) {
      for (const segment of Object.values(copy.segments)) deleted += segment.deleted_docs;
    }
  }
  return deleted;
}

async function shardStats(index: string): Promise<Map<string, estypes.IndicesStatsShardStats[]>> {
  const stats = await client.indices.stats({ index, level: 'shards' });
  return new Map(Object.entries(stats.indices?.[index]?.shards ?? {}));
}

/** Waits until every retention lease of every shard retains nothing at or below the highest sequence number seen. */
async function waitForLeases(index: string, maxSeqNo: Map<string, number>): Promise<boolean> {
  const deadline = performance.now() + LEASE_WAIT_MS;
  while (performance.now() < deadline) {
    const shards = await shardStats(index);
    const passed = [...maxSeqNo].every(([shard, seqNo]) =>
      (shards.get(shard) ?? []).every((copy) =>
        (copy.retention_leases?.leases ?? []).every((lease) => lease.retaining_seq_no > seqNo),
      ),
    );
    if (passed) return true;
    await sleep(500);
  }
  return false;
}

interface Erasure {
  deleted: number;
  deleteMs: number;
  expungeAtOnceMs: number;
  leftAtOnce: number;
  waitMs: number;
  leasePassed: boolean;
  expungeAfterMs: number;
  leftAfter: number;
  dropMs: number;
}

async function erase(layout: Layout, tenant: string): Promise<Erasure> {
  const home = layout.home(tenant);
  const deletion = await timed(() => deleteTenantDocuments(layout, tenant));
  const maxSeqNo = new Map(
    [...(await shardStats(home))].map(([shard, copies]) => [
      shard,
      Math.max(...copies.map((c) => c.seq_no?.max_seq_no ?? -1)),
    ]),
  );
  const atOnce = await timed(() => expunge(home));
  const leftAtOnce = await deletedDocs(home);
  const wait = await timed(() => waitForLeases(home, maxSeqNo));
  const after = await timed(() => expunge(home));
  const leftAfter = await deletedDocs(home);
  const drop = await timed(() => layout.dropTenant(tenant));
  return {
    deleted: deletion.value,
    deleteMs: deletion.ms,
    expungeAtOnceMs: atOnce.ms,
    leftAtOnce,
    waitMs: wait.ms,
    leasePassed: wait.value,
    expungeAfterMs: after.ms,
    leftAfter,
    dropMs: drop.ms,
  };
}

function pickDistinct(tenants: readonly string[], count: number, seed: number): string[] {
  const random = rng(seed);
  const pool = [...tenants];
  const picked: string[] = [];
  while (picked.length < Math.min(count, tenants.length)) {
    picked.push(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
  }
  return picked;
}

async function measure(layout: Layout, tenants: readonly string[]): Promise<Run> {
  const run: Run = { layout, figures: new Map(), notes: [] };
  const f = run.figures;
  const phase = (name: string) => {
    progress(`${layout.label} @${tenants.length}: ${name} (${clock()}, load ${loadAverage()})`);
    run.notes.push(`${name} at ${clock()} UTC, load ${loadAverage()}`);
  };
  try {
    const before = await baselineHeap();
    f.set('heapBefore', before.used / MIB);

    phase('create');
    const creation = await timed(async () => {
      await layout.setup();
      return createTenants(layout, tenants, run);
    });
    const created = creation.value;
    f.set('createS', creation.ms / 1000);
    f.set('createPer', creation.ms / Math.max(1, created.length));
    const ownShards = await client.cat.shards({ index: `${layout.prefix}-*`, format: 'json', h: 'index' });
    f.set('ownShards', ownShards.length);
    f.set('clusterShards', await clusterShards());
    const afterCreate = await liveHeap();
    f.set('heapCreated', afterCreate.used / MIB);
    f.set('heapPerTenantCreated', (afterCreate.used - before.used) / 1024 / Math.max(1, created.length));
    await guardHeap('after creation');

    phase('load');
    const loaded = await load(layout, created);
    f.set('loadS', loaded.ms / 1000);
    f.set('loadRate', loaded.docs / (loaded.ms / 1000));
    const afterLoad = await liveHeap();
    f.set('heapLoaded', afterLoad.used / MIB);
    f.set('heapGrowth', (afterLoad.used - before.used) / MIB);
    f.set('heapPerTenantLoaded', (afterLoad.used - before.used) / 1024 / Math.max(1, created.length));
    f.set('cpuRest', await nodeCpuAtRest());
    await guardHeap('after loading');

    phase('search');
    const results: SearchResult[] = [];
    for (const [i, query] of (await queries(created, WARMUP + SEARCHES)).entries()) {
      const result = await hybridSearch(layout, query);
      if (i >= WARMUP) results.push(result);
      if (i % 100 === 99) await guardHeap('while searching');
    }
    f.set(
      'p50',
      percentile(
        results.map((r) => r.ms),
        50,
      ),
    );
    f.set(
      'p95',
      percentile(
        results.map((r) => r.ms),
        95,
      ),
    );
    f.set(
      'took50',
      percentile(
        results.map((r) => r.took),
        50,
      ),
    );
    f.set('bm25Hits', results.reduce((s, r) => s + r.bm25Hits, 0) / results.length);
    f.set('knnHits', results.reduce((s, r) => s + r.knnHits, 0) / results.length);
    f.set(
      'foreign',
      results.reduce((s, r) => s + r.foreign, 0),
    );

    phase('erase');
    const erasures: Erasure[] = [];
    for (const tenant of pickDistinct(created, ERASURES, 11)) {
      const erasure = await erase(layout, tenant);
      erasures.push(erasure);
      progress(
        `${layout.label}: erased ${tenant}: ${JSON.stringify(erasure, (_, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))}`,
      );
      if (erasure.deleted !== DOCS) run.notes.push(`${tenant}: ${erasure.deleted} of ${DOCS} documents deleted`);
      if (!erasure.leasePassed)
        run.notes.push(`${tenant}: retention lease not past the deletes after ${LEASE_WAIT_MS / 1000} s`);
    }
    const med = (pick: (e: Erasure) => number) => median(erasures.map(pick));
    f.set(
      'eraseDelete',
      med((e) => e.deleteMs),
    );
    f.set(
      'expungeAtOnce',
      med((e) => e.expungeAtOnceMs),
    );
    f.set(
      'leftAtOnce',
      med((e) => e.leftAtOnce),
    );
    f.set('leaseWait', med((e) => e.waitMs) / 1000);
    f.set(
      'expungeAfter',
      med((e) => e.expungeAfterMs),
    );
    f.set('expungeAfterMax', Math.max(...erasures.map((e) => e.expungeAfterMs)));
    f.set(
      'leftAfter',
      med((e) => e.leftAfter),
    );
    f.set(
      'eraseWork',
      med((e) => e.deleteMs + e.expungeAtOnceMs + e.expungeAfterMs),
    );
    f.set(
      'drop',
      med((e) => e.dropMs),
    );
  } catch (error) {
    if (error instanceof HeapStop) {
      run.stopped = error.message;
    } else {
      run.stopped = `failed: ${describe(esFailure(error))}`;
      progress(error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
    progress(`${layout.label} @${tenants.length}: stopped: ${run.stopped}`);
  } finally {
    phase('teardown');
    const teardown = await timed(() => deleteIndices(`${layout.prefix}-*`));
    f.set('teardownS', teardown.ms / 1000);
  }
  return run;
}

/** Rows of a size's table: figure key, what it is, unit. */
const ROWS: readonly (readonly [string, string, string])[] = [
  ['tenants', 'tenants created', 'count'],
  ['limitAt', `per-index tenant refused by ${SHARD_LIMIT}`, 'tenant #'],
  ['createS', `create every tenant's index or alias (${CREATE_CONCURRENCY} in flight)`, 's'],
  ['createPer', '… per tenant', 'ms'],
  ['ownShards', "the layout's shards", 'count'],
  ['clusterShards', 'open shards in the cluster after creation (all users)', 'count'],
  ['heapBefore', 'JVM heap used before creation', 'MiB'],
  ['heapCreated', 'JVM heap used after creation', 'MiB'],
  ['heapPerTenantCreated', '… growth per tenant', 'KiB'],
  ['heapLoaded', 'JVM heap used after loading', 'MiB'],
  ['heapGrowth', '… growth since before creation', 'MiB'],
  ['heapPerTenantLoaded', '… growth per tenant', 'KiB'],
  ['loadS', `load ${DOCS} docs per tenant (_bulk via aliases + refresh)`, 's'],
  ['loadRate', '… rate', 'docs/s'],
  ['cpuRest', 'node CPU at rest after loading (whole node, all users)', '%'],
  ['p50', `hybrid search p50 (_msearch BM25 + kNN, k=${K}), client`, 'ms'],
  ['p95', 'hybrid search p95, client', 'ms'],
  ['took50', 'server took p50 (slower half)', 'ms'],
  ['bm25Hits', 'BM25 hits per search', 'count'],
  ['knnHits', 'kNN hits per search', 'count'],
  ['foreign', 'hits of another tenant (all searches)', 'count'],
  ['eraseDelete', "erase: delete the tenant's docs + refresh", 'ms'],
  ['expungeAtOnce', 'erase: expunge at once (refresh, settings, force merge, refresh, flush)', 'ms'],
  ['leftAtOnce', '… deleted docs still in the index', 'count'],
  ['leaseWait', 'erase: wait for the retention lease to pass the deletes', 's'],
  ['expungeAfter', 'erase: expunge after the lease sync', 'ms'],
  ['expungeAfterMax', '… slowest', 'ms'],
  ['leftAfter', '… deleted docs still in the index', 'count'],
  ['eraseWork', 'erase: delete + both expunges (without the wait)', 'ms'],
  ['drop', 'drop the erased tenant (per-index: its index; shared: its alias)', 'ms'],
  ['teardownS', "delete all the layout's indices", 's'],
];

function sizeTable(tenants: number, a: Run, b: Run): string {
  const cell = (run: Run, key: string) => {
    const x = run.figures.get(key) ?? NaN;
    return Number.isInteger(x) ? String(x) : num(x);
  };
  const rows = ROWS.filter(([key]) => a.figures.has(key) || b.figures.has(key)).map(([key, label, unit]) => {
    const x = a.figures.get(key) ?? NaN;
    const y = b.figures.get(key) ?? NaN;
    return [label, unit, cell(a, key), cell(b, key), x !== 0 && y !== 0 ? ratio(y / x) : 'n/a'];
  });
  return markdownTable(
    ['measure', 'unit', `${a.layout.label} @${tenants}`, `${b.layout.label} @${tenants}`, 'shared ÷ per-index'],
    rows,
  );
}

let cleaning: Promise<void> | null = null;

/** Deletes everything this run created, then puts the shard limit back (in that order: the limit must fit). */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        const n = await deleteIndices(`${RUN_PREFIX}-*`);
        if (n > 0) progress(`cleanup: deleted ${n} indices of ${RUN_PREFIX}`);
        break;
      } catch (error) {
        progress(`cleanup attempt ${attempt} failed: ${describe(esFailure(error))}`);
      }
    }
    try {
      await resetShardLimit();
    } catch (error) {
      progress(`could not reset ${SHARD_LIMIT}: ${describe(esFailure(error))} — reset it by hand`);
    }
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    progress(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const info = await client.info();
  const limit = await shardLimitSetting();
  const heap = await heapNow();
  await probeDeleteByQuery();
  await findNodePid();
  const others = (await client.cat.indices({ index: 'benchten-*', format: 'json', h: 'index' })).length;
  if (others > 0) progress(`${others} benchten-* indices of other runs exist; left alone`);

  out(`# Tenancy layouts of the memory index (bench/tenancy.bench.ts)`);
  out();
  out(`Started ${startedAt.toISOString()}, load average ${loadAverage()}.`);
  out(
    `Elasticsearch ${info.version.number} at ${stack.elasticsearch.url}, heap max ${num(heap.max / MIB)} MiB, ` +
      `${SHARD_LIMIT} = ${limit.value} (${limit.source}), ${await clusterShards()} open shards before the run.`,
  );
  out(
    `Per tenant ${DOCS} documents, ${DIMS}-d vectors (hashing embedder), mapping and settings from index-layout.ts; ` +
      `shared layout: 1 index × ${SHARED_SHARDS} primaries, filtered + routed alias per tenant; ` +
      `${SEARCHES} searches after ${WARMUP} warm-up; ${ERASURES} erasures per layout (medians).`,
  );
  out(
    nodePid !== null
      ? `Heap figures: heap used right after a full collection (jcmd ${nodePid} GC.run), so garbage does not count.`
      : 'Heap figures: lowest of three samples a second apart (jcmd cannot reach the node): they include garbage.',
  );
  out(
    deleteByQuery.available
      ? 'Erasure deletes with _delete_by_query through the alias.'
      : `_delete_by_query refused (${describe(deleteByQuery.failure)}): erasure deletes the tenant's ids with _bulk, as the adapter does.`,
  );

  for (const count of TENANT_COUNTS) {
    const tenants = Array.from({ length: count }, (_, i) => tenantId(i + 1));
    const a = await measure(perIndexLayout(`${RUN_PREFIX}-a${count}`), tenants);
    const b = await measure(sharedLayout(`${RUN_PREFIX}-b${count}`, SHARED_SHARDS), tenants);
    if (shardLimitRaised !== null) await resetShardLimit();
    out();
    out(`## ${count} tenants (finished ${clock()} UTC, load average ${loadAverage()})`);
    out();
    out(sizeTable(count, a, b));
    out();
    for (const run of [a, b]) {
      if (run.stopped) out(`- **${run.layout.label} stopped**: ${run.stopped}`);
      for (const note of run.notes) out(`- ${run.layout.label}: ${note}`);
    }
  }
  out();
  out(`Finished ${new Date().toISOString()}, load average ${loadAverage()}.`);
}

let code = 0;
try {
  await main();
} catch (error) {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  code = 1;
} finally {
  await cleanup();
  await client.close();
}
process.exit(code);
