import { z } from 'zod';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import type { MemoryRecord } from '../substrate/model/records.js';
import type { SearchIndex } from '../substrate/search/search-index.port.js';
import type { DisputeStore } from '../governance/disputes/dispute-store.js';
import { seeMemory, type Sight } from '../governance/read/read-judge.js';
import type { Reader } from '../governance/read/reader.js';
import { indexFiltersFor } from './reader-filters.js';
import type { ReadTrace } from './read-trace.js';

export const SearchRequestSchema = z.strictObject({
  query: z.string().min(1).max(2048),
  k: z.number().int().min(1).max(100).default(10),
  /** current: what holds now; history: what was ever held (superseded included); as-of: valid at `asOf`. */
  intent: z.enum(['current', 'history', 'as-of']).default('current'),
  asOf: z.iso.datetime({ offset: true }).optional(),
  namespaces: z.array(z.string().min(1).max(128)).max(32).optional(),
  kinds: z.array(z.string().min(1).max(32)).max(16).optional(),
  /** What the reader reads for (memory-read policy); the duty of the reader's role when absent. */
  purpose: z.string().min(1).max(64).optional(),
});
export type SearchRequest = z.output<typeof SearchRequestSchema>;

export interface SearchResult {
  memory: Sight<MemoryRecord>;
  score: number;
  /** For a disputed record: its open disputes and the records it disagrees with (served right after it). */
  disputes?: { id: string; with: string[] }[];
}

/**
 * Governed hybrid search, under the same read policy as retrieval: the reader's grants (scope and sensitivity),
 * the intent's statuses and valid time go into the index query (never after the top-k); every hit is re-read
 * from MongoDB and judged again, since a status, hold or scope can change after indexing. What it serves is
 * recorded as a read of those ids, so an erasure's exposure statement counts it.
 */
export function createSearchService(deps: {
  index: SearchIndex;
  memories: MemoryStore;
  disputes: DisputeStore;
  trace: ReadTrace;
}) {
  const filtersOf = (request: SearchRequest, reader: Reader) => ({
    ...indexFiltersFor(reader),
    ...(request.namespaces ? { namespaces: request.namespaces } : {}),
    ...(request.kinds ? { kinds: request.kinds } : {}),
  });

  /**
   * Many searches by one reader: the index asked for all at once and every hit re-read once, however many of the
   * searches found it. Each answer is what `search` serves for that request alone.
   */
  async function searchMany(
    tenant: string,
    requests: readonly SearchRequest[],
    reader: Reader,
    options: { traced?: boolean } = {},
  ): Promise<SearchResult[][]> {
    const hitLists = await deps.index.searchMany(
      tenant,
      requests.map((request) => ({ text: request.query, k: request.k, filters: filtersOf(request, reader) })),
    );
    const records = new Map(
      (
        await deps.memories.getMany(
          tenant,
          hitLists.flat().map((h) => h.id),
        )
      ).map((r) => [r._id, r]),
    );
    const seen = (m: MemoryRecord | undefined) => seeMemory(reader, m, { contentOnly: true });
    const answers: SearchResult[][] = [];
    for (const [at, hits] of hitLists.entries()) {
      const results = hits.flatMap((hit) => {
        const memory = seen(records.get(hit.id));
        return memory ? [{ memory, score: hit.score }] : [];
      });
      const served = await disclose(tenant, results, seen);
      // An erasure's own probe is not a disclosure: everything else that served content is.
      if (options.traced !== false)
        await deps.trace.recordRead(
          reader,
          'search',
          requests[at]!.query,
          served.map((r) => r.memory.record._id),
        );
      answers.push(served);
    }
    return answers;
  }

  /**
   * Everything `searchMany` could serve this reader, whatever the query: every document the reader's index filters
   * admit, a page at a time, re-read and judged as a search's hits are, with the records their open disputes
   * disclose. Served to no one (an erasure's verification reads it), so not recorded as a read. A record may come
   * in more than one page (as a counterpart, then in its own).
   */
  async function* servable(tenant: string, reader: Reader): AsyncGenerator<SearchResult[]> {
    const seen = (m: MemoryRecord | undefined) => seeMemory(reader, m, { contentOnly: true });
    for await (const ids of deps.index.idsUnder(tenant, indexFiltersFor(reader))) {
      const results = (await deps.memories.getMany(tenant, ids)).flatMap((record) => {
        const memory = seen(record);
        return memory ? [{ memory, score: 0 }] : [];
      });
      yield await disclose(tenant, results, seen);
    }
  }

  return {
    /** `reader` was resolved with the request's intent and `asOf`. */
    async search(
      tenant: string,
      request: SearchRequest,
      reader: Reader,
      options: { traced?: boolean } = {},
    ): Promise<SearchResult[]> {
      return (await searchMany(tenant, [request], reader, options))[0]!;
    },
    searchMany,
    servable,
  };

  /**
   * A disputed record is never served alone: each of its open disputes is named, and the records it disagrees
   * with follow it (with its score), whether or not they ranked — when the reader may see them.
   */
  async function disclose(
    tenant: string,
    results: SearchResult[],
    seen: (m: MemoryRecord | undefined) => Sight<MemoryRecord> | null,
  ): Promise<SearchResult[]> {
    const disputed = results.filter((r) => r.memory.record.status === 'disputed').map((r) => r.memory.record._id);
    if (disputed.length === 0) return results;
    const open = await deps.disputes.openForMany(tenant, disputed);
    const counterpartIds = [...open.values()].flat().flatMap((d) => d.memoryIds);
    const counterparts = new Map((await deps.memories.getMany(tenant, counterpartIds)).map((m) => [m._id, m] as const));
    const shownIds = new Set<string>();
    const out: SearchResult[] = [];
    for (const result of results) {
      const id = result.memory.record._id;
      if (shownIds.has(id)) continue;
      shownIds.add(id);
      const of = result.memory.record.status === 'disputed' ? (open.get(id) ?? []) : [];
      // Only counterparts the reader may see are named: an unseen one stays unnamed.
      const visible = new Map<string, Sight<MemoryRecord>>();
      for (const d of of)
        for (const other of d.memoryIds) {
          if (other === id) continue;
          const sight = seen(counterparts.get(other));
          if (sight) visible.set(other, sight);
        }
      const disputes = of.map((d) => ({ id: d._id, with: d.memoryIds.filter((m) => m !== id && visible.has(m)) }));
      out.push(disputes.length === 0 ? result : { ...result, disputes });
      for (const [otherId, other] of visible) {
        if (shownIds.has(otherId)) continue;
        shownIds.add(otherId);
        const linking = disputes.filter((d) => d.with.includes(otherId));
        out.push({ memory: other, score: result.score, disputes: linking.map((d) => ({ id: d.id, with: [id] })) });
      }
    }
    return out;
  }
}
export type SearchService = ReturnType<typeof createSearchService>;
