/**
 * The write-time derivation audit inside admission: for each memory of a batch, gather its citations and the
 * earlier history of its subjects, audit it, and let the derivation-admission policy decide what the label does.
 * Content is read here and goes no further: the result holds ids, labels and counts.
 */
import { createStemCache } from '../governance/derivation/bm25.js';
import { auditDerivation, type DerivationVerdict } from '../governance/derivation/derivation-audit.js';
import type { DerivationVerifier, EvidencePassage } from '../governance/derivation/verifier.port.js';
import { evaluatePolicy, type PolicyDecision, type PolicyDocument } from '../governance/policy/evaluate.js';
import { idempotencyKeyOf, type EventStore } from '../substrate/events/event-store.js';
import { sha256Hex } from '../substrate/fingerprint.js';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import type { DerivationAuditRecord, EventRecord } from '../substrate/model/records.js';
import { mapBounded } from '../substrate/mongo/collections.js';
import type { EventInput, MemoryInput } from './write-schemas.js';

/** Events of a subject read as the pool of one audit: enough for a long conversation, bounded for a huge one. */
export const HISTORY_POOL_LIMIT = 2000;
/** And at most this much of its content, in bytes: a subject of large events is read as far as it fits. */
export const HISTORY_POOL_BYTES = 2 * 1024 * 1024;
const AUDIT_CONCURRENCY = 8;

export interface DerivationDeps {
  mode: 'enforce' | 'record';
  verifier: DerivationVerifier;
  timeoutMs: number;
  policy: PolicyDocument;
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

/** The derivation audits of a batch's memories, in batch order. */
export async function auditBatchDerivations(
  deps: { events: EventStore; memories: MemoryStore; derivation: DerivationDeps },
  tenant: string,
  batch: { events: EventInput[]; memories: MemoryInput[] },
  now: Date,
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
  const histories = new Map(
    await mapBounded(
      subjects,
      AUDIT_CONCURRENCY,
      async (s) => [s, await deps.events.historyOf(tenant, s, latest, HISTORY_POOL_LIMIT, HISTORY_POOL_BYTES)] as const,
    ),
  );
  // The batch's stems die with the batch: no process-wide cache keeps a passage an erasure removes later.
  const stems = createStemCache();
  return mapBounded([...batch.memories.entries()], AUDIT_CONCURRENCY, async ([i, m]) => {
    const storedIds = m.provenance.eventIds.filter((ref) => !BATCH_REF.test(ref));
    const stored = await deps.events.getMany(tenant, storedIds);
    const parents = await deps.memories.getMany(tenant, m.provenance.parentIds);
    const cited: EvidencePassage[] = [
      ...m.provenance.eventIds.flatMap((ref) => {
        const at = BATCH_REF.exec(ref);
        return at ? [local[Number(at[1])]!] : [];
      }),
      ...stored.map(passageOf),
      ...parents.map((p) => ({ id: p._id, text: p.content, at: p.recordedAt })),
    ];
    const pool = new Map<string, EvidencePassage>();
    let truncated = false;
    for (const s of m.subjects) {
      const h = histories.get(s)!;
      truncated ||= h.truncated;
      for (const e of h.events) pool.set(e._id, passageOf(e));
    }
    batch.events.forEach((e, j) => {
      if (e.subjects.some((s) => m.subjects.includes(s))) pool.set(local[j]!.id, local[j]!);
    });
    const verdict = await auditDerivation(
      { content: m.content, cited, pool: [...pool.values()], before: cutoffs[i]!, poolTruncated: truncated },
      { verifier: deps.derivation.verifier, timeoutMs: deps.derivation.timeoutMs, stems },
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
