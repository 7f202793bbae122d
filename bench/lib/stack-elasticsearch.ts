/**
 * Elasticsearch part of `bench/stack.bench.ts`: `_bulk` rate for documents with text + keyword + a 64-d
 * dense_vector, then client-side latency of BM25 + filter and of filtered kNN, in a bench-only index.
 */
import type { Client, estypes } from '@elastic/elasticsearch';
import { percentile, timed } from './stack-report.js';

export interface EsPlan {
  docs: number;
  dims: number;
  bulkSize: number;
  queries: number;
  warmup: number;
  k: number;
  numCandidates: number;
}

export interface Latency {
  p50: number;
  p95: number;
  /** Server-side `took`, p50, ms. */
  tookP50: number;
}

export interface EsFigures {
  bulkRate: number;
  bulkMs: number;
  refreshMs: number;
  bm25: Latency;
  knn: Latency;
  /** Mean hits per query, to show the filters leave work to do. */
  bm25Hits: number;
  knnHits: number;
}

const TENANTS = ['t-a', 't-b', 't-c'];
const NAMESPACES = ['crm', 'support', 'billing', 'hr', 'legal', 'sales', 'ops', 'product'];
const VOCABULARY = Array.from(
  { length: 2000 },
  (_, i) => `${'bcdfghklmnprstvz'[i % 16]}${i.toString(36)}${'aeiou'[i % 5]}`,
);

function text(random: () => number, words: number): string {
  // Skewed towards low ranks (a few words are common), as in natural text.
  return Array.from({ length: words }, () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)]!).join(' ');
}

function vector(random: () => number, dims: number): number[] {
  const v = Array.from({ length: dims }, () => random() * 2 - 1);
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function latency(clientMs: number[], took: number[]): Latency {
  return { p50: percentile(clientMs, 50), p95: percentile(clientMs, 95), tookP50: percentile(took, 50) };
}

export async function measureElasticsearch(
  client: Client,
  index: string,
  plan: EsPlan,
  random: () => number,
): Promise<EsFigures> {
  await client.indices.create({
    index,
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    mappings: {
      dynamic: 'strict',
      properties: {
        tenant: { type: 'keyword' },
        namespace: { type: 'keyword' },
        content: { type: 'text' },
        embedding: { type: 'dense_vector', dims: plan.dims, index: true, similarity: 'cosine' },
      },
    },
  });

  let bulkMs = 0;
  for (let start = 0; start < plan.docs; start += plan.bulkSize) {
    const operations: unknown[] = [];
    for (let i = start; i < Math.min(plan.docs, start + plan.bulkSize); i++) {
      operations.push({ index: { _index: index, _id: `d-${i}` } });
      operations.push({
        tenant: TENANTS[i % TENANTS.length],
        namespace: NAMESPACES[Math.floor(i / TENANTS.length) % NAMESPACES.length],
        content: text(random, 20 + Math.floor(random() * 40)),
        embedding: vector(random, plan.dims),
      });
    }
    const { ms, value } = await timed(() => client.bulk({ operations, refresh: false }));
    bulkMs += ms;
    if (value.errors) {
      const first = value.items.find((item) => item.index?.error)?.index?.error;
      throw new Error(`_bulk reported errors: ${JSON.stringify(first)}`);
    }
  }
  const refresh = await timed(() => client.indices.refresh({ index }));

  const filter = (i: number): estypes.QueryDslQueryContainer[] => [
    { term: { tenant: TENANTS[i % TENANTS.length]! } },
    { terms: { namespace: [NAMESPACES[i % NAMESPACES.length]!, NAMESPACES[(i + 3) % NAMESPACES.length]!] } },
  ];
  const bm25 = (i: number) =>
    client.search({
      index,
      size: plan.k,
      _source: false,
      query: { bool: { must: [{ match: { content: text(random, 3) } }], filter: filter(i) } },
    });
  const knn = (i: number) =>
    client.search({
      index,
      size: plan.k,
      _source: false,
      knn: {
        field: 'embedding',
        query_vector: vector(random, plan.dims),
        k: plan.k,
        num_candidates: plan.numCandidates,
        filter: filter(i),
      },
    });

  // Interleaved, so that machine noise falls on both kinds alike.
  const ms = { bm25: [] as number[], knn: [] as number[] };
  const took = { bm25: [] as number[], knn: [] as number[] };
  const hits = { bm25: 0, knn: 0 };
  for (let i = 0; i < plan.warmup + plan.queries; i++) {
    for (const [kind, run] of [
      ['bm25', bm25],
      ['knn', knn],
    ] as const) {
      const t = await timed(() => run(i));
      if (i < plan.warmup) continue;
      ms[kind].push(t.ms);
      took[kind].push(t.value.took);
      hits[kind] += t.value.hits.hits.length;
    }
  }
  return {
    bulkRate: (plan.docs / bulkMs) * 1000,
    bulkMs,
    refreshMs: refresh.ms,
    bm25: latency(ms.bm25, took.bm25),
    knn: latency(ms.knn, took.knn),
    bm25Hits: hits.bm25 / plan.queries,
    knnHits: hits.knn / plan.queries,
  };
}
