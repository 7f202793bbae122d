/**
 * Per-route, per-k tallies of `bench/retrieval.bench.ts`: anchor recall, feasibility at τ, typed inadmissible
 * exposure and latency. Ground truth is `judge()` (src/governance/read/admissibility.ts) on the record as MongoDB holds
 * it, for the asker's scopes, sensitivities and intent. Pure code.
 */
import { judge, type ReaderView } from '../../src/governance/read/admissibility.js';
import type { MemoryRecord } from '../../src/substrate/model/records.js';
import { principalScope } from '../../src/substrate/model/records.js';
import type { Reader } from '../../src/governance/read/reader.js';
import { NO_RESTRICTIONS } from '../../src/governance/rights/restriction.js';
import { READER_PURPOSE, READER_SENSITIVITIES, type BenchQuery } from './retrieval-dataset.js';

export const TAU = 0.8;

export function viewOf(q: BenchQuery): ReaderView {
  return {
    scopes: [principalScope(q.principal), 'tenant'],
    sensitivities: READER_SENSITIVITIES,
    intent: q.intent,
    now: new Date(),
  };
}

/** The reader the bench's agents are: own and shared scope, the dataset's readable sensitivities. */
export const accessOf = (q: BenchQuery): Reader => ({
  principal: { id: q.principal, tenant: q.tenant, roles: ['agent'] },
  grants: [
    {
      purpose: READER_PURPOSE,
      view: 'content',
      sensitivities: READER_SENSITIVITIES,
      scopes: [principalScope(q.principal), 'tenant'],
      duty: false,
      readsRestricted: false,
      rule: 'default',
    },
  ],
  grantedPurposes: [READER_PURPOSE],
  intent: q.intent,
  now: new Date(),
  purpose: READER_PURPOSE,
  restrictions: NO_RESTRICTIONS,
  policies: { read: { id: 'memory-read', version: 1 }, scope: { id: 'memory-scope', version: 1 } },
});

export interface Tally {
  queries: number;
  recallSum: number;
  feasible: number;
  returned: number;
  inadmissible: number;
  wrongScope: number;
  deleted: number;
  held: number;
  supersededForCurrent: number;
  latencies: number[];
}

export const emptyTally = (): Tally => ({
  queries: 0,
  recallSum: 0,
  feasible: 0,
  returned: 0,
  inadmissible: 0,
  wrongScope: 0,
  deleted: 0,
  held: 0,
  supersededForCurrent: 0,
  latencies: [],
});

/**
 * Adds one answer (ids best first, at most k) to the tally.
 *
 * - recall: anchors among the returned ids / anchors.
 * - feasible (τ = 0.8): the answer reaches τ anchor recall — at least ⌈τ·n⌉ of the n anchors, i.e. all of them
 *   for the 1–3 anchors a query has here — and the matched prefix (the shortest prefix of the answer that
 *   reaches it) holds no inadmissible record. Infeasible when recall stays below τ within the top k.
 * - exposure: every returned id counts; inadmissible = judge() ≠ 1, or no longer in MongoDB. The typed counts
 *   may overlap (a deleted record of another principal is both).
 */
export function addAnswer(
  tally: Tally,
  q: BenchQuery,
  ids: readonly string[],
  byId: ReadonlyMap<string, MemoryRecord>,
  ms: number,
): void {
  const view = viewOf(q);
  const anchors = new Set(q.anchors);
  const need = Math.ceil(TAU * anchors.size - 1e-9);
  let found = 0;
  let inadmissibleSoFar = 0;
  let feasible = false;
  for (const id of ids) {
    const record = byId.get(id);
    const verdict = record ? judge(record, view) : null;
    const inadmissible = verdict === null || verdict.admissible !== 1;
    if (inadmissible) {
      tally.inadmissible++;
      inadmissibleSoFar++;
    }
    if (!record || record.status === 'deleted') tally.deleted++;
    if (verdict?.axes.scope === 0) tally.wrongScope++;
    if ((record?.restrictedBy?.length ?? 0) > 0) tally.held++;
    if (q.intent === 'current' && record?.status === 'superseded') tally.supersededForCurrent++;
    if (anchors.has(id)) {
      found++;
      if (found === need && inadmissibleSoFar === 0) feasible = true;
    }
  }
  tally.queries++;
  tally.returned += ids.length;
  tally.recallSum += anchors.size === 0 ? 0 : found / anchors.size;
  if (feasible) tally.feasible++;
  tally.latencies.push(ms);
}
