/**
 * Vector-operation counting for `bench/retrieval.bench.ts`: Elasticsearch's search profiler reports, per shard,
 * `profile.shards[].dfs.knn[].vector_operations_count` — how many query–vector similarities the kNN search
 * computed (HNSW graph visits, or every filtered document when it falls back to an exact scan). A client wrapper
 * turns `profile: true` on in every `_msearch` body the index adapter sends, so the counts cover whatever the
 * adapter and the retrieval service above it actually ask (refill rounds included).
 */
import type { Client } from '@elastic/elasticsearch';

/** Sum of `vector_operations_count` over the shards of one search response's profile; null when not reported. */
export function vectorOperations(response: unknown): number | null {
  const shards = (response as { profile?: { shards?: unknown[] } } | null)?.profile?.shards;
  if (!Array.isArray(shards)) return null;
  let total = 0;
  let seen = false;
  for (const shard of shards) {
    const knn = (shard as { dfs?: { knn?: unknown[] } }).dfs?.knn;
    if (!Array.isArray(knn)) continue;
    for (const entry of knn) {
      const count = (entry as { vector_operations_count?: unknown }).vector_operations_count;
      if (typeof count === 'number') {
        total += count;
        seen = true;
      }
    }
  }
  return seen ? total : null;
}

export interface VectorCounter {
  /** Similarities counted since the last reset; `missing` counts kNN searches whose profile had no count. */
  total: number;
  searches: number;
  missing: number;
  reset(): void;
}

/** A client whose `msearch` profiles every search and adds its vector operations to the counter. */
export function profilingClient(client: Client): { client: Client; counter: VectorCounter } {
  const counter: VectorCounter = {
    total: 0,
    searches: 0,
    missing: 0,
    reset() {
      this.total = 0;
      this.searches = 0;
      this.missing = 0;
    },
  };
  const msearch = async (params: { searches: Record<string, unknown>[] }) => {
    // Items alternate header, body: profile each body.
    const searches = params.searches.map((item, i) => (i % 2 === 1 ? { ...item, profile: true } : item));
    const response = await client.msearch({ ...params, searches } as Parameters<Client['msearch']>[0]);
    params.searches.forEach((item, i) => {
      if (i % 2 === 0 || !('knn' in item)) return;
      const r = response.responses[(i - 1) / 2];
      const ops = vectorOperations(r);
      counter.searches++;
      if (ops === null) counter.missing++;
      else counter.total += ops;
    });
    return response;
  };
  const wrapped = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'msearch') return msearch;
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { client: wrapped, counter };
}
