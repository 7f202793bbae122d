/**
 * The write-time derivation audit inside admission: for each memory of a batch, gather its citations and the
 * earlier history of its subjects, audit it, and let the derivation-admission policy decide what the label does.
 * Content is read here and goes no further: the result holds ids, labels and counts.
 */
import { createStemCache, stemsOf, type StemCache } from '../governance/derivation/bm25.js';
import { bytesOf } from '../governance/derivation/evidence-scope.js';
import { auditDerivation, type DerivationVerdict } from '../governance/derivation/derivation-audit.js';
import type { DerivationVerifier, EvidencePassage } from '../governance/derivation/verifier.port.js';
import { evaluatePolicy, type PolicyDecision, type PolicyDocument } from '../governance/policy/evaluate.js';
import { idempotencyKeyOf, type EventStore } from '../substrate/events/event-store.js';
import { sha256Hex } from '../shared/sha256.js';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import { principalScope, type DerivationAuditRecord, type EventRecord } from '../substrate/model/records.js';
import { mapBounded } from '../substrate/mongo/collections.js';
import type { RestrictionSnapshot } from '../governance/rights/restriction.js';
import { eventAsProcessed, mayProcess, type ProcessingContext } from '../governance/read/processing-judge.js';
import type { EventInput, MemoryInput } from './write-schemas.js';

/** Events of a subject read as the pool of one audit: enough for a long conversation, bounded for a huge one. */
export const HISTORY_POOL_LIMIT = 2000;
/** And at most this much of its content, in bytes: a subject of large events is read as far as it fits. */
export const HISTORY_POOL_BYTES = 2 * 1024 * 1024;
const AUDIT_CONCURRENCY = 8;
/**
 * Subjects whose history is read at once: reads (two queries each, one per scope), not audits, so as many as
 * admission writes at once. Each read is bounded by its equal share of the batch's byte budget, whatever the order.
 */
const HISTORY_CONCURRENCY = 16;

export interface DerivationDeps {
  mode: 'enforce' | 'record';
  verifier: DerivationVerifier;
  timeoutMs: number;
  policy: PolicyDocument;
  /** Evidence one audit, and one batch of audits, may read, in UTF-8 bytes (`LETHE_DERIVATION_*_MAX_BYTES`). */
  maxAuditBytes: number;
  maxBatchBytes: number;
}

export interface DerivationOutcome {
  verdict: DerivationVerdict;
  decision: PolicyDecision;
  /** What admission does: in `record` mode always `admit` (the verdict is only kept). */
  effect: 'admit' | 'sign-off' | 'refuse';
  record: DerivationAuditRecord;
}

const BATCH_REF = /^#(\d+)$/;

/** The id an event of this batch gets when it is recorded (the event store's own scheme). */
function batchEventId(events: EventStore, tenant: string, e: EventInput): string {
  return events.idOf(tenant, idempotencyKeyOf(e.source, e.externalId, sha256Hex(e.content)));
}

const passageOf = (e: EventRecord): EvidencePassage => ({ id: e._id, text: e.content, at: e.occurredAt });

/** Text tokenised between two turns of the event loop: a few milliseconds of work. */
const TOKENISE_SLICE_BYTES = 64 * 1024;

/**
 * Tokenises the batch's pool into its stem cache, giving the event loop a turn every slice: the pool may hold
 * megabytes, and the activity that admits the batch must keep heartbeating (and other writes keep being admitted)
 * while it is read. Ranking then finds every passage's stems in the cache.
 */
async function tokenisePool(passages: Iterable<EvidencePassage>, cache: StemCache): Promise<void> {
  let slice = 0;
  for (const passage of passages) {
    stemsOf(passage, cache);
    slice += passage.text.length;
    if (slice >= TOKENISE_SLICE_BYTES) {
      slice = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/** The derivation audits of a batch's memories, in batch order. */
export async function auditBatchDerivations(
  deps: {
    events: EventStore;
    memories: MemoryStore;
    derivation: DerivationDeps;
    restrictions: { snapshot(tenant: string): Promise<RestrictionSnapshot> };
  },
  tenant: string,
  batch: { events: EventInput[]; memories: MemoryInput[] },
  now: Date,
  /** The writer: the history searched is what it may read (its own events and the tenant's shared ones). */
  principal: string,
): Promise<DerivationOutcome[]> {
  const local: EvidencePassage[] = batch.events.map((e) => ({
    id: batchEventId(deps.events, tenant, e),
    text: e.content,
    at: new Date(e.occurredAt),
  }));
  // One history read per subject for the whole batch, up to the latest derivation time; each memory then keeps
  // only what occurred at or before its own.
  const cutoffs = batch.memories.map((m) => (m.derivedAt ? new Date(m.derivedAt) : now));
  const latest = new Date(Math.max(now.getTime(), ...cutoffs.map((c) => c.getTime())));
  const subjects = [...new Set(batch.memories.flatMap((m) => m.subjects))];
  // What the audit may read as evidence is the processing judge's: the writer's scopes, no held event, none of a
  // subject who restricted processing or objected to the memory's purpose. A refusal naming such an event would tell
  // the writer what it says.
  const restrictions = await deps.restrictions.snapshot(tenant);
  const evidenceContext = (m: MemoryInput): ProcessingContext => ({
    tenant,
    scopes: ['tenant', principalScope(principal)],
    purposes: [m.purpose],
    restrictions,
    now,
  });
  // The batch's evidence budget: half for the subjects' history, shared equally (so the reads may run at once and
  // still read the same whatever their order), the rest for citations in batch order.
  const { maxAuditBytes, maxBatchBytes } = deps.derivation;
  const historyShare = Math.min(HISTORY_POOL_BYTES, Math.floor(maxBatchBytes / 2 / Math.max(1, subjects.length)));
  const histories = new Map(
    await mapBounded(subjects, HISTORY_CONCURRENCY, async (s) => {
      // Another principal's events are no evidence for this writer: a verdict, a repair or a refusal naming them
      // would tell it what they say. They are not read at all, so a subject crowded by other agents' events leaves
      // this writer's own history whole.
      const scopes = ['tenant', principalScope(principal)];
      return [s, await deps.events.historyOf(tenant, s, scopes, latest, HISTORY_POOL_LIMIT, historyShare)] as const;
    }),
  );
  // The batch's stems die with the batch: no process-wide cache keeps a passage an erasure removes later.
  const stems = createStemCache();
  await tokenisePool(
    [...histories.values()].flatMap((h) => h.events.map(passageOf)),
    stems,
  );
  let citationBudget =
    maxBatchBytes - [...histories.values()].reduce((n, h) => n + bytesOf(h.events.map(passageOf)), 0);
  // Citations are charged in batch order, whatever order their reads finish in: each memory waits for the one
  // before it to have charged its own.
  let charged: Promise<void> = Promise.resolve();
  return mapBounded([...batch.memories.entries()], AUDIT_CONCURRENCY, async ([i, m]) => {
    const previous = charged;
    let release!: () => void;
    charged = new Promise((resolve) => (release = resolve));
    let cited: EvidencePassage[];
    let overBatchBudget = false;
    try {
      const storedIds = m.provenance.eventIds.filter((ref) => !BATCH_REF.test(ref));
      const usable = evidenceContext(m);
      const stored = (await deps.events.getMany(tenant, storedIds)).filter(
        (e) => mayProcess('evidence', eventAsProcessed(e), usable).allowed,
      );
      const parents = (await deps.memories.getMany(tenant, m.provenance.parentIds)).filter(
        (p) => mayProcess('evidence', p, usable).allowed,
      );
      cited = [
        ...m.provenance.eventIds.flatMap((ref) => {
          const at = BATCH_REF.exec(ref);
          return at ? [local[Number(at[1])]!] : [];
        }),
        ...stored.map(passageOf),
        ...parents.map((p) => ({ id: p._id, text: p.content, at: p.recordedAt })),
      ];
      await previous;
      const size = bytesOf(cited);
      // Citations over the audit's own budget are not read (the audit is unresolved) and cost the batch nothing.
      if (size <= maxAuditBytes) {
        if (size <= citationBudget) citationBudget -= size;
        else overBatchBudget = true;
      }
    } finally {
      release();
    }
    const pool = new Map<string, EvidencePassage>();
    let truncated = false;
    const usable = evidenceContext(m);
    for (const s of m.subjects) {
      const h = histories.get(s)!;
      truncated ||= h.truncated;
      for (const e of h.events)
        if (mayProcess('evidence', eventAsProcessed(e), usable).allowed) pool.set(e._id, passageOf(e));
    }
    batch.events.forEach((e, j) => {
      if (e.subjects.some((s) => m.subjects.includes(s))) pool.set(local[j]!.id, local[j]!);
    });
    const verdict = await auditDerivation(
      {
        content: m.content,
        cited: overBatchBudget ? [] : cited,
        pool: [...pool.values()],
        before: cutoffs[i]!,
        poolTruncated: truncated,
        overBatchBudget,
      },
      {
        verifier: deps.derivation.verifier,
        timeoutMs: deps.derivation.timeoutMs,
        stems,
        maxEvidenceBytes: maxAuditBytes,
      },
    );
    const decision = evaluatePolicy(deps.derivation.policy, { label: verdict.label });
    const outcome = decision.outcome as DerivationOutcome['effect'];
    const effect = deps.derivation.mode === 'record' ? 'admit' : outcome;
    return {
      verdict,
      decision,
      effect,
      record: {
        ...verdict,
        mode: deps.derivation.mode,
        policy: { id: decision.policyId, version: decision.policyVersion, rule: decision.ruleId, outcome },
      },
    };
  });
}

/** The obligation a refusal names: the first contradicted one, by id and kind (never its text). */
export function contradictedObligation(verdict: DerivationVerdict): string {
  const o = verdict.obligations.find((x) => x.label === 'contradicted');
  if (!o) return 'the memory';
  const kind = o.relation ? `relation: ${o.relation}` : o.kind;
  return `obligation ${o.id} (${kind}), contradicted by ${o.evidenceIds.join(', ') || 'the history'}`;
}
