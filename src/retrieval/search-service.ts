import { z } from 'zod';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import type { MemoryRecord } from '../substrate/model/records.js';
import type { SearchIndex } from '../substrate/search/search-index.port.js';
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
});
export type SearchRequest = z.output<typeof SearchRequestSchema>;

const HISTORY_STATUSES: MemoryStatus[] = ['active', 'disputed', 'superseded'];

export interface SearchResult {
  memory: MemoryRecord;
  score: number;
}

/** Statuses admissible for a query's intent: stale records answer history questions, never current ones. */
export function statusesFor(intent: SearchRequest['intent']): MemoryStatus[] {
  return intent === 'current' ? [...CURRENT_STATUSES] : HISTORY_STATUSES;
}

/**
 * Governed hybrid retrieval: scope and lifecycle go into the index query (never after the top-k); the
 * records are then re-read from MongoDB so that a status changed since indexing is honoured.
 */
export function createSearchService(deps: { index: SearchIndex; memories: MemoryStore }) {
  return {
    async search(tenant: string, request: SearchRequest): Promise<SearchResult[]> {
      if (request.intent === 'as-of' && !request.asOf) throw validationError('asOf', 'required when intent is as-of');
      const statuses = statusesFor(request.intent);
      const hits = await deps.index.search(tenant, {
        text: request.query,
        k: request.k,
        filters: {
          statuses,
          ...(request.namespaces ? { namespaces: request.namespaces } : {}),
          ...(request.kinds ? { kinds: request.kinds } : {}),
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
      return hits.flatMap((hit) => {
        const memory = records.get(hit.id);
        // Records under a legal hold are never served by search (the legal role reads them by id).
        const restricted = (memory?.restrictedBy?.length ?? 0) > 0;
        return memory && statuses.includes(memory.status) && !restricted ? [{ memory, score: hit.score }] : [];
      });
    },
  };
}
export type SearchService = ReturnType<typeof createSearchService>;
