/**
 * Governed retrieval for an agent's context: scope, purpose policy and lifecycle go into the index query (inside
 * both halves of the hybrid query); every candidate is then re-read from MongoDB and judged on the three axes
 * (`admissibility.ts`), since a status, hold or scope can change after indexing. What is refused or unresolved is
 * counted, never returned; the admissible set is refilled from deeper candidate pages up to k, then packed into
 * the context budget, and the retrieval is recorded for exposure tracing.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import type { MemoryRecord } from '../substrate/model/records.js';
import type { SearchIndex } from '../substrate/search/search-index.port.js';
import type { Fingerprinter } from '../substrate/fingerprint.js';
import type { DisputeStore } from '../governance/disputes/dispute-store.js';
import { validationError } from '../shared/errors.js';
import {
  countVerdict,
  emptyRefusalCounts,
  INTENT_STATUSES,
  judge,
  type ReaderView,
  type RefusalCounts,
} from './admissibility.js';
import { packContext } from './context-packing.js';
import type { ExposureStore } from './exposure-store.js';

export const MAX_K = 50;
/** How deep the refill may go: past it, the answer is short and says so. */
export const MAX_DEPTH = 400;

export const RetrieveRequestSchema = z.strictObject({
  query: z.string().min(1).max(2048),
  purpose: z.string().min(1).max(64).optional(),
  intent: z.enum(['current', 'history', 'as-of']).default('current'),
  asOf: z.iso.datetime({ offset: true }).optional(),
  k: z.number().int().min(1).max(MAX_K).default(10),
  /** The context budget in tokens (≈ 4 characters each). */
  budgetTokens: z.number().int().min(1).max(100_000).default(2000),
  namespaces: z.array(z.string().min(1).max(128)).min(1).max(32).optional(),
});
export type RetrieveRequest = z.output<typeof RetrieveRequestSchema>;

export interface RetrievedItem {
  memory: MemoryRecord;
  score: number;
  tokens: number;
  disputes?: { id: string; with: string[] }[];
}

export interface Retrieval {
  retrievalId: string;
  items: RetrievedItem[];
  counts: {
    /** Candidates judged (index hits re-read from MongoDB). */
    candidates: number;
    admissible: number;
    /** Per axis: refused (0) and unresolved (unknown). A candidate may count on several axes. */
    axes: RefusalCounts;
    /** Candidates inadmissible overall: 0 on some axis, or unknown. */
    refused: number;
    unresolved: number;
    /** Admissible records left out of the context because the budget ran out. */
    leftOutForBudget: number;
  };
  /** True when fewer than k admissible records exist within the refill depth. */
  short: boolean;
  budget: { tokens: number; used: number };
}

export interface ReaderAccess {
  principal: string;
  purpose: string;
  sensitivities: readonly string[];
  scopes: readonly string[] | 'all';
}

export function createRetrievalService(deps: {
  index: SearchIndex;
  memories: MemoryStore;
  disputes: DisputeStore;
  exposures: ExposureStore;
  fingerprints: Fingerprinter;
}) {
  return {
    async retrieve(tenant: string, request: RetrieveRequest, access: ReaderAccess): Promise<Retrieval> {
      if (request.intent === 'as-of' && !request.asOf) throw validationError('asOf', 'required when intent is as-of');
      if (request.intent !== 'as-of' && request.asOf) throw validationError('asOf', 'only with intent as-of');
      const asOf = request.asOf ? new Date(request.asOf) : undefined;
      const view: ReaderView = {
        scopes: access.scopes,
        sensitivities: access.sensitivities,
        intent: request.intent,
        ...(asOf ? { asOf } : {}),
      };
      const filters = {
        statuses: [...INTENT_STATUSES[request.intent]],
        sensitivities: [...access.sensitivities],
        ...(access.scopes === 'all' ? {} : { scopes: [...access.scopes] }),
        ...(request.namespaces ? { namespaces: request.namespaces } : {}),
        ...(asOf ? { validAt: asOf } : {}),
      };

      const counts = emptyRefusalCounts();
      const judged = new Set<string>();
      const admissible: { memory: MemoryRecord; score: number }[] = [];
      let refused = 0;
      let unresolved = 0;
      let exhausted = false;
      // Refill: ask deeper until k are admissible or the index has no more candidates (or the depth cap is hit).
      for (let depth = Math.min(MAX_DEPTH, request.k * 2); admissible.length < request.k; ) {
        const hits = await deps.index.search(tenant, { text: request.query, k: depth, filters });
        const fresh = hits.filter((h) => !judged.has(h.id));
        const records = new Map((await deps.memories.getMany(tenant, fresh.map((h) => h.id))).map((r) => [r._id, r]));
        for (const hit of fresh) {
          judged.add(hit.id);
          const memory = records.get(hit.id);
          // In the index but no longer in the store: an erasure got there first.
          if (!memory) {
            counts.lifecycle.refused++;
            refused++;
            continue;
          }
          const verdict = judge(memory, view);
          countVerdict(counts, verdict);
          if (verdict.admissible === 1) {
            if (admissible.length < request.k) admissible.push({ memory, score: hit.score });
          } else if (verdict.admissible === 0) refused++;
          else unresolved++;
        }
        if (hits.length < depth || depth >= MAX_DEPTH) {
          exhausted = admissible.length < request.k;
          break;
        }
        depth = Math.min(MAX_DEPTH, depth * 2);
      }

      const open = await deps.disputes.openForMany(
        tenant,
        admissible.filter((a) => a.memory.status === 'disputed').map((a) => a.memory._id),
      );
      const inSet = new Set(admissible.map((a) => a.memory._id));
      const disputesOf = (id: string) =>
        (open.get(id) ?? []).map((d) => ({ id: d._id, with: d.memoryIds.filter((m) => m !== id) }));
      const packed = packContext(
        admissible.map((a) => ({
          id: a.memory._id,
          score: a.score,
          status: a.memory.status,
          content: a.memory.content,
          // Only counterparts that are themselves admissible go in with it; the others stay unnamed.
          disputedWith: disputesOf(a.memory._id).flatMap((d) => d.with.filter((id) => inSet.has(id))),
          memory: a.memory,
        })),
        request.budgetTokens,
      );
      const items: RetrievedItem[] = packed.items.map((p) => {
        const disputes = disputesOf(p.id)
          .map((d) => ({ id: d.id, with: d.with.filter((id) => inSet.has(id)) }))
          .filter((d) => d.with.length > 0 || p.status === 'disputed');
        return { memory: p.memory, score: p.score, tokens: p.tokens, ...(disputes.length > 0 ? { disputes } : {}) };
      });

      const retrievalId = `rtv_${randomUUID()}`;
      await deps.exposures.recordRetrieval(
        {
          _id: retrievalId,
          tenant,
          principal: access.principal,
          purpose: access.purpose,
          intent: request.intent,
          queryHash: deps.fingerprints.of('retrieval-query', tenant, request.query),
          returned: items.length,
          at: new Date(),
        },
        items.map((i) => i.memory._id),
      );
      return {
        retrievalId,
        items,
        counts: {
          candidates: judged.size,
          admissible: admissible.length,
          axes: counts,
          refused,
          unresolved,
          leftOutForBudget: packed.leftOut,
        },
        short: exhausted,
        budget: { tokens: request.budgetTokens, used: packed.usedTokens },
      };
    },
  };
}
export type RetrievalService = ReturnType<typeof createRetrievalService>;
