import { z } from 'zod';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import type { MemoryRecord } from '../substrate/model/records.js';
import type { SearchIndex } from '../substrate/search/search-index.port.js';
import type { DisputeStore } from '../governance/disputes/dispute-store.js';
import type { MemoryStatus } from '../shared/lifecycle.js';
import { CURRENT_STATUSES } from '../shared/lifecycle.js';
import { validationError } from '../shared/errors.js';

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

const HISTORY_STATUSES: MemoryStatus[] = ['active', 'disputed', 'superseded'];

export interface SearchResult {
  memory: MemoryRecord;
  score: number;
  /** For a disputed record: its open disputes and the records it disagrees with (served right after it). */
  disputes?: { id: string; with: string[] }[];
}

/** Statuses admissible for a query's intent: stale records answer history questions, never current ones. */
export function statusesFor(intent: SearchRequest['intent']): MemoryStatus[] {
  return intent === 'current' ? [...CURRENT_STATUSES] : HISTORY_STATUSES;
}

/**
 * Governed hybrid retrieval: scope and lifecycle go into the index query (never after the top-k); the
 * records are then re-read from MongoDB so that a status changed since indexing is honoured.
 */
export function createSearchService(deps: { index: SearchIndex; memories: MemoryStore; disputes: DisputeStore }) {
  return {
    /** `sensitivities`: what the reader may see (from the read policy); the index never returns anything else. */
    async search(tenant: string, request: SearchRequest, sensitivities?: readonly string[]): Promise<SearchResult[]> {
      if (request.intent === 'as-of' && !request.asOf) throw validationError('asOf', 'required when intent is as-of');
      const statuses = statusesFor(request.intent);
      const hits = await deps.index.search(tenant, {
        text: request.query,
        k: request.k,
        filters: {
          statuses,
          ...(request.namespaces ? { namespaces: request.namespaces } : {}),
          ...(request.kinds ? { kinds: request.kinds } : {}),
          ...(sensitivities ? { sensitivities: [...sensitivities] } : {}),
          ...(request.intent === 'as-of' && request.asOf ? { validAt: new Date(request.asOf) } : {}),
        },
      });
      const records = new Map(
        (
          await deps.memories.getMany(
            tenant,
            hits.map((h) => h.id),
          )
        ).map((r) => [r._id, r]),
      );
      // Records under a legal hold are never served by search (the legal role reads them by id).
      const servable = (m: MemoryRecord | undefined): m is MemoryRecord =>
        m !== undefined &&
        statuses.includes(m.status) &&
        (m.restrictedBy?.length ?? 0) === 0 &&
        (!sensitivities || sensitivities.includes(m.policy.sensitivity));
      const results = hits.flatMap((hit) => {
        const memory = records.get(hit.id);
        return servable(memory) ? [{ memory, score: hit.score }] : [];
      });
      return disclose(tenant, results, servable);
    },
  };

  /**
   * A disputed record is never served alone: each of its open disputes is named, and the records it disagrees
   * with follow it (with its score), whether or not they ranked, so that the reader sees both sides.
   */
  async function disclose(
    tenant: string,
    results: SearchResult[],
    servable: (m: MemoryRecord | undefined) => m is MemoryRecord,
  ): Promise<SearchResult[]> {
    const disputed = results.filter((r) => r.memory.status === 'disputed').map((r) => r.memory._id);
    if (disputed.length === 0) return results;
    const open = await deps.disputes.openForMany(tenant, disputed);
    const counterpartIds = [...open.values()].flat().flatMap((d) => d.memoryIds);
    const counterparts = new Map(
      (await deps.memories.getMany(tenant, counterpartIds)).map((m) => [m._id, m] as const),
    );
    const seen = new Set<string>();
    const out: SearchResult[] = [];
    const withDisputes = (memory: MemoryRecord, score: number): SearchResult => {
      const of = memory.status === 'disputed' ? (open.get(memory._id) ?? []) : [];
      return of.length === 0
        ? { memory, score }
        : { memory, score, disputes: of.map((d) => ({ id: d._id, with: d.memoryIds.filter((id) => id !== memory._id) })) };
    };
    for (const result of results) {
      if (seen.has(result.memory._id)) continue;
      seen.add(result.memory._id);
      const shown = withDisputes(result.memory, result.score);
      out.push(shown);
      for (const id of shown.disputes?.flatMap((d) => d.with) ?? []) {
        const other = counterparts.get(id);
        if (seen.has(id) || !servable(other)) continue;
        seen.add(id);
        const linking = shown.disputes!.filter((d) => d.with.includes(id));
        out.push({ memory: other, score: result.score, disputes: linking.map((d) => ({ id: d.id, with: [result.memory._id] })) });
      }
    }
    return out;
  }
}
export type SearchService = ReturnType<typeof createSearchService>;
