/**
 * Governed retrieval for an agent's context: scope, purpose policy and lifecycle go into the index query (inside
 * both halves of the hybrid query); every candidate is then re-read from MongoDB and judged on the three axes
 * (`admissibility.ts`), since a status, hold or scope can change after indexing. What is refused or unresolved is
 * counted, never returned; the admissible set is refilled from deeper candidate pages up to k, then packed into
 * the context budget, and the retrieval is recorded for exposure tracing.
 */
import { z } from 'zod';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import type { MemoryRecord } from '../substrate/model/records.js';
import type { SearchIndex } from '../substrate/search/search-index.port.js';
import type { DisputeStore } from '../governance/disputes/dispute-store.js';
import {
  countVerdict,
  emptyRefusalCounts,
  type RefusalCounts,
  type Verdict,
} from '../governance/read/admissibility.js';
import { seeMemory, verdictOf, type Sight } from '../governance/read/read-judge.js';
import { contentGrants, type Reader } from '../governance/read/reader.js';
import { packContext } from './context-packing.js';
import { indexFiltersFor } from './reader-filters.js';
import type { ReadTrace } from './read-trace.js';

export const MAX_K = 50;
/**
 * A tainted record's score (it descends from external or lowest-trust content) is multiplied by this before the
 * context is packed: it ranks below an untainted record that matches as well, and is still served when relevant.
 */
export const TAINT_PENALTY = 0.5;

const isTainted = (m: MemoryRecord) => (m.taint?.length ?? 0) > 0;

/** Scores with the taint penalty applied, highest first (stable among equals). */
export function penaliseTaint<T extends { memory: Sight<MemoryRecord>; score: number }>(items: readonly T[]): T[] {
  return items
    .map((item) => (isTainted(item.memory.record) ? { ...item, score: item.score * TAINT_PENALTY } : item))
    .sort((a, b) => b.score - a.score);
}
/** How deep the refill may go: past it, the answer is short and says so. */
export const MAX_DEPTH = 400;

/**
 * How many candidates to re-read when `needed` more admissible records are wanted: a tenth more than needed, so
 * that a refusal or two among them does not cost another round trip.
 */
export function readAhead(needed: number): number {
  return needed + Math.ceil(needed / 10);
}

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
  memory: Sight<MemoryRecord>;
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
    /** Items served that are tainted (each says how in its `taint`). */
    tainted: number;
  };
  /** True when every item served is tainted: nothing untainted stands behind an answer built on this context. */
  taintedOnly: boolean;
  /** True when fewer than k admissible records exist within the refill depth. */
  short: boolean;
  budget: { tokens: number; used: number };
}

/**
 * The verdict counted for a refused candidate: of the reader's content grants, the one that came closest (fewest
 * axes at 0, then fewest unknown), so that a refusal is counted on the axes that refused it.
 */
function closestVerdict(reader: Reader, memory: MemoryRecord): Verdict {
  const verdicts = contentGrants(reader).map((g) => verdictOf(reader, g, memory));
  const weight = (v: Verdict) =>
    Object.values(v.axes).reduce<number>((n, t) => n + (t === 0 ? 10 : t === 'unknown' ? 1 : 0), 0);
  const refusedByPolicy: Verdict = { axes: { scope: 'unknown', policy: 0, lifecycle: 'unknown' }, admissible: 0 };
  return verdicts.sort((a, b) => weight(a) - weight(b))[0] ?? refusedByPolicy;
}

export function createRetrievalService(deps: {
  index: SearchIndex;
  memories: MemoryStore;
  disputes: DisputeStore;
  trace: ReadTrace;
}) {
  return {
    /** `reader` was resolved with the request's purpose, intent and `asOf` (the route checks their shape). */
    async retrieve(tenant: string, request: RetrieveRequest, reader: Reader): Promise<Retrieval> {
      const filters = {
        ...indexFiltersFor(reader),
        ...(request.namespaces ? { namespaces: request.namespaces } : {}),
      };

      const counts = emptyRefusalCounts();
      const judged = new Set<string>();
      const admissible: { memory: Sight<MemoryRecord>; score: number }[] = [];
      let refused = 0;
      let unresolved = 0;
      let exhausted = false;
      // The index filters already keep out most of what the judge refuses, so candidates are re-read in rank order
      // only as many at a time as may still be needed (a point read each is the store's costliest step); the index
      // is asked deeper only once its hits are used up, until k are admissible or the depth cap is hit.
      for (let depth = Math.min(MAX_DEPTH, request.k * 2); admissible.length < request.k;) {
        const hits = await deps.index.search(tenant, { text: request.query, k: depth, filters });
        const fresh = hits.filter((h) => !judged.has(h.id));
        for (let next = 0; admissible.length < request.k && next < fresh.length;) {
          const batch = fresh.slice(next, next + readAhead(request.k - admissible.length));
          next += batch.length;
          const records = new Map(
            (
              await deps.memories.getMany(
                tenant,
                batch.map((h) => h.id),
              )
            ).map((r) => [r._id, r]),
          );
          for (const hit of batch) {
            judged.add(hit.id);
            const memory = records.get(hit.id);
            // In the index but no longer in the store: an erasure got there first.
            if (!memory) {
              counts.lifecycle.refused++;
              refused++;
              continue;
            }
            const sight = seeMemory(reader, memory, { contentOnly: true });
            if (sight) {
              if (admissible.length < request.k) admissible.push({ memory: sight, score: hit.score });
              continue;
            }
            const verdict = closestVerdict(reader, memory);
            countVerdict(counts, verdict);
            if (verdict.admissible === 0) refused++;
            else unresolved++;
          }
        }
        if (admissible.length >= request.k) break;
        if (hits.length < depth || depth >= MAX_DEPTH) {
          exhausted = true;
          break;
        }
        depth = Math.min(MAX_DEPTH, depth * 2);
      }

      const open = await deps.disputes.openForMany(
        tenant,
        admissible.filter((a) => a.memory.record.status === 'disputed').map((a) => a.memory.record._id),
      );
      const inSet = new Set(admissible.map((a) => a.memory.record._id));
      const disputesOf = (id: string) =>
        (open.get(id) ?? []).map((d) => ({ id: d._id, with: d.memoryIds.filter((m) => m !== id) }));
      const packed = packContext(
        penaliseTaint(admissible).map((a) => ({
          id: a.memory.record._id,
          score: a.score,
          status: a.memory.record.status,
          content: a.memory.record.content,
          // Only counterparts that are themselves admissible go in with it; the others stay unnamed.
          disputedWith: disputesOf(a.memory.record._id).flatMap((d) => d.with.filter((id) => inSet.has(id))),
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

      const retrievalId = await deps.trace.recordRead(
        reader,
        'retrieve',
        request.query,
        items.map((i) => i.memory.record._id),
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
          tainted: items.filter((i) => isTainted(i.memory.record)).length,
        },
        taintedOnly: items.length > 0 && items.every((i) => isTainted(i.memory.record)),
        short: exhausted,
        budget: { tokens: request.budgetTokens, used: packed.usedTokens },
      };
    },
  };
}
export type RetrievalService = ReturnType<typeof createRetrievalService>;
