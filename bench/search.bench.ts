/**
 * Search-index benchmark against the configured Elasticsearch (`npm run bench:search`):
 * bulk index rate for ~2 000 memories with 256-d vectors, then client-side latency of the hybrid query
 * with tenant + namespace filters against BM25 alone (unfiltered), BM25 + filters, and filtered kNN.
 * Modes run round-robin so machine noise spreads evenly. The bench tenant's index is dropped at the end.
 */
import { randomUUID } from 'node:crypto';
import { Client, type estypes } from '@elastic/elasticsearch';
import { loadConfig } from '../src/config/load-config.js';
import type { MemoryRecord } from '../src/substrate/model/records.js';
import { createHashingEmbedder } from '../src/substrate/search/hashing-embedder.js';
import {
  createElasticsearchSearchIndex,
  numCandidates,
  rankWindow,
} from '../src/substrate/search/elasticsearch-search-index.js';
import { tenantIndexNames } from '../src/substrate/search/index-layout.js';
import { buildFilterClauses } from '../src/substrate/search/search-filters.js';
import { benchName, runBench } from './lib/bench-run.js';

const DOCS = Number(process.env.BENCH_DOCS ?? 2000);
const DIMS = 256;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const WARMUP = 20;
const K = 10;
const NAMESPACES = ['crm', 'support', 'billing', 'hr', 'legal', 'sales', 'ops', 'product'];

// Deterministic pseudo-random text (mulberry32), so runs are comparable.
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(42);
const VOCAB = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}x`);
// Zipf-like: low word ids are frequent, as in natural text.
const word = (): string => VOCAB[Math.floor(VOCAB.length * random() ** 3)]!;
const sentence = (n: number): string => Array.from({ length: n }, word).join(' ');

function record(tenant: string, i: number): MemoryRecord {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 3_600_000);
  return {
    _id: `m-${i}`,
    tenant,
    namespace: NAMESPACES[i % NAMESPACES.length]!,
    subjects: [`s-${i % 97}`],
    kind: 'fact',
    attribute: null,
    content: sentence(20 + Math.floor(random() * 40)),
    contentHash: `h-${i}`,
    validFrom: at,
    validTo: null,
    recordedAt: at,
    policy: { purpose: 'support', sensitivity: 'internal', jurisdiction: 'EU', retentionClass: 'standard' },
    provenance: { eventIds: [], parentIds: [], derivationRule: 'bench', modelVersion: null, promptVersion: null },
    trustTier: 2,
    confidence: 0.8,
    version: 1,
    status: i % 10 === 0 ? 'superseded' : 'active',
    writtenBy: 'bench',
    expiresAt: null,
    highImpact: false,
    statusReason: null,
    updatedAt: at,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const client = new Client({ node: config.elasticsearch.url, requestTimeout: 120_000 });
  const embedder = createHashingEmbedder({ dims: DIMS });
  const prefix = config.elasticsearch.indexPrefix;
  const index = createElasticsearchSearchIndex(client, { prefix, embedder });
  const tenant = benchName(`search-${randomUUID().slice(0, 8)}`);
  const { alias } = tenantIndexNames(prefix, tenant);
  try {
    await index.ensureTenantIndex(tenant);
    const records = Array.from({ length: DOCS }, (_, i) => record(tenant, i));

    const t0 = performance.now();
    const result = await index.upsert(tenant, records, { refresh: 'wait_for' });
    const indexMs = performance.now() - t0;
    if (result.failed.length > 0) throw new Error(`${result.failed.length} documents failed to index`);
    const embedStart = performance.now();
    await embedder.embed(records.map((r) => r.content));
    const embedMs = performance.now() - embedStart;

    const queries = Array.from({ length: QUERIES + WARMUP }, () => sentence(4));
    const filters = { namespaces: ['crm', 'support'] };
    const filter = buildFilterClauses(tenant, filters);
    const window = rankWindow(K);
    const modes: Record<string, (q: string) => Promise<unknown>> = {
      'hybrid, tenant+namespace filters': (q) => index.search(tenant, { text: q, k: K, filters }),
      'BM25 alone, unfiltered': (q) =>
        client.search({ index: alias, size: window, _source: false, query: { match: { content: q } } }),
      'BM25, tenant+namespace filters': (q) =>
        client.search({
          index: alias,
          size: window,
          _source: false,
          query: { bool: { must: [{ match: { content: q } }], filter } },
        }),
      'kNN, tenant+namespace filters': async (q) => {
        const [vector] = await embedder.embed([q]);
        const knn: estypes.KnnSearch = {
          field: 'embedding',
          query_vector: vector!,
          k: window,
          num_candidates: numCandidates(window),
          filter,
        };
        return client.search({ index: alias, size: window, _source: false, knn });
      },
    };
    const timings = new Map<string, number[]>(Object.keys(modes).map((m) => [m, []]));
    for (const [i, q] of queries.entries()) {
      for (const [mode, run] of Object.entries(modes)) {
        const start = performance.now();
        await run(q);
        if (i >= WARMUP) timings.get(mode)!.push(performance.now() - start);
      }
    }

    const summary: Record<string, { p50: number; p95: number }> = {};
    for (const [mode, values] of timings) {
      const sorted = [...values].sort((a, b) => a - b);
      summary[mode] = { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
    }
    const hybrid = summary['hybrid, tenant+namespace filters']!;
    const bm25 = summary['BM25 alone, unfiltered']!;
    console.log(`index: ${DOCS} docs, ${DIMS}-d vectors, ${alias}`);
    console.log(
      `bulk index (embed + _bulk + refresh): ${(DOCS / (indexMs / 1000)).toFixed(0)} docs/s ` +
        `(${indexMs.toFixed(0)} ms; embedding alone ${embedMs.toFixed(0)} ms)`,
    );
    console.log(`queries: ${QUERIES} per mode after ${WARMUP} warm-up, k=${K}, rank window ${window}`);
    for (const [mode, { p50, p95 }] of Object.entries(summary)) {
      console.log(`  ${mode.padEnd(36)} p50 ${p50.toFixed(1).padStart(6)} ms   p95 ${p95.toFixed(1).padStart(6)} ms`);
    }
    console.log(
      `hybrid filtered / BM25 unfiltered: p50 ×${(hybrid.p50 / bm25.p50).toFixed(2)}, p95 ×${(hybrid.p95 / bm25.p95).toFixed(2)}`,
    );
  } finally {
    await index.dropTenant(tenant);
    await client.close();
  }
}

await runBench(main);
