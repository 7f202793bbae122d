import { ApplicationFailure } from '@temporalio/activity';
import { indexUnlessErased } from '../src/substrate/search/index-unless-erased.js';
import type { AuditLog } from '../src/governance/audit/audit-log.port.js';
import type { Notifier } from '../src/governance/notifications/notifier.js';
import type { PolicyDocument } from '../src/governance/policy/evaluate.js';
import { reviewPlan, type ReviewPlan } from '../src/governance/review/review-plan.js';
import {
  adjudicationTargets,
  claimGroups,
  contradicts,
  isCorrectedBy,
  supersededValidTo,
  type Adjudication,
} from '../src/governance/disputes/contradiction.js';
import type { DisputeStore } from '../src/governance/disputes/dispute-store.js';
import type { ErasureSetStore } from '../src/governance/erasure/erasure-set-store.js';
import type { ErasureFenceStore, FenceKey } from '../src/governance/erasure/erasure-fence-store.js';
import { idempotencyKeyOf, type EventStore, type NewEvent } from '../src/substrate/events/event-store.js';
import { sha256Hex } from '../src/shared/sha256.js';
import type { LineageStore } from '../src/substrate/lineage/lineage-store.js';
import { claimOf, type Claim, type ClaimLookup } from '../src/substrate/memories/claim-lookup.js';
import type { MemoryStore } from '../src/substrate/memories/memory-store.js';
import type { EventRecord, MemoryRecord, Sensitivity } from '../src/substrate/model/records.js';
import { principalScope, SENSITIVITIES } from '../src/substrate/model/records.js';
import type { SearchIndex } from '../src/substrate/search/search-index.port.js';
import { canTransition, type MemoryStatus } from '../src/shared/lifecycle.js';
import { ErrorType } from '../src/shared/errors.js';
import { mapBounded } from '../src/substrate/mongo/collections.js';
import { droppedQualifiers } from '../src/governance/derivation/qualifier-drift.js';

export interface DisputeActivityDeps {
  memories: MemoryStore;
  claims: ClaimLookup;
  events: EventStore;
  lineage: LineageStore;
  disputes: DisputeStore;
  erasureSets: ErasureSetStore;
  fences: ErasureFenceStore;
  index: SearchIndex;
  audit: AuditLog;
  notifier: Notifier;
  reviewSlaPolicy: PolicyDocument;
  reviewTimeoutPolicy: PolicyDocument;
  reviewersEmail: string;
  escalationEmail: string;
  now?: () => Date;
}

/** A dispute to put before a reviewer: ids and durations only. */
export interface DisputeStart {
  disputeId: string;
  memoryIds: string[];
  writers: string[];
  plan: ReviewPlan;
}

/** The erasure wins: the reviewer is told the dispute's record is going, as for a record that is gone. */
function erasedUnderDecision(disputeId: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorType.Conflict,
    message: `dispute ${disputeId}: a record of it is being erased; no decision was made`,
    details: ['id'],
    nonRetryable: true,
  });
}

/** Groups checked at once (as many as admission writes at once). */
const DETECT_CONCURRENCY = 16;

/** Corrections are followed this far back along an event's `correctionOf` chain. */
const MAX_CORRECTION_DEPTH = 32;

/** A record that claims something detection compares: held, with an attribute. */
const isHeld = (r: MemoryRecord): boolean => r.attribute !== null && (r.status === 'active' || r.status === 'disputed');

const mostSensitive = (records: readonly MemoryRecord[]): Sensitivity =>
  SENSITIVITIES[Math.max(0, ...records.map((r) => SENSITIVITIES.indexOf(r.policy.sensitivity)))]!;

/**
 * Activities of disputes and supersession. Every status move is a compare-and-set with a reason naming its
 * cause, followed by one audit entry keyed by that cause: a retry that finds the move done writes the entry it
 * may have missed, and never a second one.
 */
export function createDisputeActivities(deps: DisputeActivityDeps) {
  const now = deps.now ?? (() => new Date());

  /** Moves one record to `to` for `cause`; true if it is there because of this cause (now or on an earlier try). */
  async function move(
    tenant: string,
    id: string,
    to: MemoryStatus,
    cause: string,
    actor: string,
    details: Record<string, string | null>,
    patch?: Partial<Pick<MemoryRecord, 'validTo'>>,
  ): Promise<boolean> {
    const record = await deps.memories.get(tenant, id);
    if (!record) return false;
    let from: MemoryStatus | null = record.status;
    if (record.status === to && record.statusReason === cause) {
      from = await deps.memories.statusBeforeMove(id, record.version);
    } else if (
      !canTransition(record.status, to) ||
      !(await deps.memories.transition(tenant, id, record.status, to, cause, patch))
    ) {
      return false;
    }
    await deps.audit.append({
      tenant,
      actor,
      action: `memory.${to}`,
      target: id,
      outcome: 'ok',
      details: { from, to, cause, ...details },
      idempotencyKey: `${cause}:${id}`,
    });
    return true;
  }

  /**
   * Earlier records derived from events that this record's events correct. `read`: the events the caller has read
   * already (events are immutable: read a moment earlier, they say the same).
   */
  async function correctedBy(tenant: string, record: MemoryRecord, read?: ReadonlyMap<string, EventRecord>) {
    const ancestors = new Set<string>();
    const cited = read
      ? [...new Set(record.provenance.eventIds)].flatMap((id) => read.get(id) ?? [])
      : await deps.events.getMany(tenant, record.provenance.eventIds);
    for (const event of cited) {
      let previous = event.correctionOf;
      for (let depth = 0; previous && depth < MAX_CORRECTION_DEPTH && !ancestors.has(previous); depth++) {
        ancestors.add(previous);
        previous = (await deps.events.get(tenant, previous))?.correctionOf ?? null;
      }
    }
    const children = (await Promise.all([...ancestors].map((id) => deps.lineage.childrenOf(tenant, id)))).flat();
    const claims = await deps.claims.byIds(tenant, children);
    return claims.filter((c) => isCorrectedBy(c, claimOf(record)));
  }

  /** A correction should carry the replaced record's qualifiers forward; the kinds it drops are flagged and audited. */
  async function flagDroppedQualifiers(tenant: string, earlierId: string, record: MemoryRecord): Promise<void> {
    const earlier = await deps.memories.get(tenant, earlierId);
    if (!earlier) return;
    const dropped = droppedQualifiers(earlier.content, record.content);
    if (dropped.length === 0) return;
    await deps.memories.flagQualifierDrift(tenant, record._id, { from: earlierId, dropped });
    await deps.audit.append({
      tenant,
      actor: 'lethe:admission',
      action: 'memory.qualifiers-dropped',
      target: record._id,
      outcome: 'ok',
      details: { from: earlierId, dropped: dropped.join(',') },
      idempotencyKey: `qualifiers:${record._id}:${earlierId}`,
    });
  }

  return {
    /**
     * For records that just became active (in batch order): supersede what their source corrected, then open a
     * dispute with every held claim they contradict. Both records of a dispute become `disputed`.
     */
    async detectContradictions(input: {
      tenant: string;
      ids: string[];
      /** The stage whose admission wrote them (and most events they cite): read by it, not by a lookup each. */
      stageId?: string;
    }): Promise<{ disputes: DisputeStart[]; superseded: number }> {
      const { tenant } = input;
      const written = input.stageId ? { stageId: input.stageId } : {};
      // By id: two writes of one batch that disagree find each other, and open one dispute.
      const disputes = new Map<string, DisputeStart>();
      let superseded = 0;
      // Records that share no (attribute, subject) cannot disagree with each other: those groups run in parallel,
      // and each group in batch order, so that two writes of one batch about the same thing meet exactly once.
      const order = new Map(input.ids.map((id, i) => [id, i]));
      const loaded = (await deps.memories.getMany(tenant, input.ids, written)).sort(
        (a, b) => order.get(a._id)! - order.get(b._id)!,
      );
      const groups = claimGroups(loaded);
      // Read for the whole batch at once rather than record by record: the events its records cite, and the claims
      // each group's first record is compared with (a later record of a group reads its own, after the records
      // before it have moved). A claim read here may have moved by the time it is compared: a rival is read again
      // before a dispute is opened with it.
      const firsts = groups.map((g) => g[0]!).filter((r): r is MemoryRecord & { attribute: string } => isHeld(r));
      const [citedEvents, claimsOfFirsts] = await Promise.all([
        deps.events.getMany(tenant, [...new Set(loaded.flatMap((r) => r.provenance.eventIds))], written),
        deps.claims.bySubjectAttributes(tenant, firsts),
      ]);
      const cited = new Map(citedEvents.map((e) => [e._id, e]));
      const firstClaims = new Map(claimsOfFirsts.map((claims, i) => [firsts[i]!._id, claims]));
      await mapBounded(groups, DETECT_CONCURRENCY, async (group) => {
        // Only an earlier record of the same group can have moved a later one since it was loaded.
        for (const [i, loadedRecord] of group.entries())
          await (i === 0
            ? detectOne(loadedRecord, firstClaims.get(loadedRecord._id))
            : detectOne(await deps.memories.get(tenant, loadedRecord._id)));
      });
      return { disputes: [...disputes.values()].sort((a, b) => a.disputeId.localeCompare(b.disputeId)), superseded };

      /** `read`: the claims about its subjects' attribute, read with the batch's (each rival is then read again). */
      async function detectOne(record: MemoryRecord | null, read?: Claim[]): Promise<void> {
        if (!record || (record.status !== 'active' && record.status !== 'disputed')) return;
        const corrected = await correctedBy(tenant, record, cited);
        for (const earlier of corrected) {
          const cause = `superseded-by:${record._id}`;
          const validTo = supersededValidTo(earlier, record, now());
          if (
            await move(
              tenant,
              earlier.id,
              'superseded',
              cause,
              record.writtenBy,
              { by: record._id, rule: 'same-source-correction' },
              { validTo },
            )
          ) {
            superseded++;
            await reindex(tenant, [earlier.id]);
            await flagDroppedQualifiers(tenant, earlier.id, record);
          }
        }
        if (record.attribute === null) return;
        // Read before this record superseded anything, the claims would show what it superseded as still held.
        const claims =
          read && corrected.length === 0
            ? read
            : await deps.claims.bySubjectAttribute(tenant, record.subjects, record.attribute);
        const rivals = claims.filter((c) => contradicts(claimOf(record), c));
        for (const rival of rivals) {
          const pair = await deps.memories.getMany(tenant, [record._id, rival.id]);
          if (claims === read) {
            // Read with the batch: a rival that has since moved (superseded, rejected, erased) is no longer held.
            const current = pair.find((p) => p._id === rival.id);
            if (!current || !contradicts(claimOf(record), claimOf(current))) continue;
          }
          const dispute = await deps.disputes.open({
            tenant,
            memoryIds: [record._id, rival.id],
            namespace: record.namespace,
            attribute: record.attribute,
            writers: [...new Set([record.writtenBy, rival.writtenBy])],
            openedAt: now(),
          });
          await deps.audit.append({
            tenant,
            actor: 'lethe:admission',
            action: 'dispute.opened',
            target: dispute._id,
            outcome: 'ok',
            details: { memoryIds: dispute.memoryIds.join(',') },
            idempotencyKey: `dispute:${dispute._id}:opened`,
          });
          const cause = `dispute:${dispute._id}`;
          for (const memoryId of dispute.memoryIds) {
            await move(tenant, memoryId, 'disputed', cause, 'lethe:admission', { dispute: dispute._id });
          }
          await reindex(tenant, dispute.memoryIds);
          disputes.set(dispute._id, {
            disputeId: dispute._id,
            memoryIds: dispute.memoryIds,
            writers: dispute.writers,
            plan: reviewPlan(deps.reviewSlaPolicy, deps.reviewTimeoutPolicy, mostSensitive(pair)),
          });
        }
      }
    },

    /**
     * A reviewer's adjudication: keep one (the other is superseded, its valid time closed), keep both, or reject
     * one. The resolution is recorded as an event carrying the reviewer's reason; a record still in another open
     * dispute stays disputed.
     */
    async applyAdjudication(input: {
      tenant: string;
      disputeId: string;
      reviewer: string;
      outcome: Adjudication;
      memoryId: string | null;
      reasonHash: string;
      reasonKey?: string;
    }): Promise<Record<string, MemoryStatus>> {
      const { tenant, disputeId } = input;
      const dispute = await deps.disputes.get(tenant, disputeId);
      if (!dispute) throw ApplicationFailure.nonRetryable(`dispute ${disputeId} not found`, ErrorType.NotFound);
      const statuses = async (): Promise<Record<string, MemoryStatus>> =>
        Object.fromEntries((await deps.memories.getMany(tenant, dispute.memoryIds)).map((r) => [r._id, r.status]));
      // A retry after the resolution was recorded only reports it.
      if (dispute.state === 'resolved') return statuses();
      const records = await deps.memories.getMany(tenant, dispute.memoryIds);
      const reasonKey = input.reasonKey ?? input.reasonHash;
      // A running erasure owns its records, their subjects and whatever would be derived from them: the
      // decision loses to it, before anything is written and again after the resolution event is.
      const fenced = () => erasureOfDispute(tenant, records);
      const gone =
        records.length < dispute.memoryIds.length ||
        records.some((r) => r.status === 'deleted' || r.status === 'purged');
      if (gone || (await fenced())) throw erasedUnderDecision(disputeId);
      const reason = await deps.disputes.reason(tenant, disputeId, reasonKey);
      if (reason === null)
        throw ApplicationFailure.nonRetryable(`dispute ${disputeId}: reason not found`, ErrorType.NotFound);
      const at = now();
      const resolution: NewEvent = {
        tenant,
        namespace: dispute.namespace,
        source: 'lethe-review',
        externalId: disputeId,
        content: reason,
        subjects: [...new Set(records.flatMap((r) => r.subjects))],
        sensitivity: mostSensitive(records),
        trustTier: 3,
        occurredAt: at,
        recordedBy: input.reviewer,
        // The reviewer's words: read by the tenant-wide duties (review, the DPO, legal), never as an agent's context.
        scope: principalScope(input.reviewer),
      };
      // The resolution is derived from both records: registered first (invariant 3), under the id the event store
      // will give it, so that an erasure of either record reaches the reason and subjects it carries.
      const resolutionKey = idempotencyKeyOf(resolution.source, resolution.externalId, sha256Hex(resolution.content));
      await deps.lineage.register(tenant, deps.events.idOf(tenant, resolutionKey), dispute.memoryIds);
      // Written under a lease, as an admission is: an erasure that lowers its fence first waits for this write to
      // end (or revokes it), so the event is either seen by that erasure or taken back here.
      const lease = `dispute:${disputeId}`;
      await deps.fences.admissions.open(tenant, lease);
      let event: EventRecord;
      try {
        const written = await deps.events.record(resolution);
        event = written.event;
        const standing = await deps.fences.admissions.standing(tenant, lease);
        if ((await fenced()) || standing.state !== 'open') {
          // The erasure's fence rose while the event was written; it either reaches the event through the lineage
          // edge registered first, or the event is taken back here (shredded). Either way no decision is made.
          if (written.outcome !== 'duplicate') await deps.events.withdraw(tenant, [event._id]);
          await deps.lineage.forget(tenant, [event._id]);
          throw erasedUnderDecision(disputeId);
        }
      } finally {
        await deps.fences.admissions.close(tenant, lease);
      }
      const targets = adjudicationTargets(dispute.memoryIds, input.outcome, input.memoryId);
      const winner = records.find((r) => targets.get(r._id) === 'active');
      const cause = `dispute:${disputeId}:${input.outcome}`;
      for (const record of records) {
        const target = targets.get(record._id)!;
        if (target === 'active' && (await deps.disputes.openFor(tenant, record._id)).some((d) => d._id !== disputeId))
          continue;
        const patch =
          target === 'superseded' && winner ? { validTo: supersededValidTo(record, winner, at) } : undefined;
        await move(
          tenant,
          record._id,
          target,
          cause,
          input.reviewer,
          { dispute: disputeId, resolutionEvent: event._id },
          patch,
        );
      }
      await reindex(tenant, dispute.memoryIds);
      await deps.disputes.resolve(tenant, disputeId, {
        outcome: input.outcome,
        memoryId: input.memoryId,
        reviewer: input.reviewer,
        reasonHash: input.reasonHash,
        eventId: event._id,
        at,
      });
      await deps.audit.append({
        tenant,
        actor: input.reviewer,
        action: 'dispute.resolved',
        target: disputeId,
        outcome: 'ok',
        details: {
          outcome: input.outcome,
          memoryId: input.memoryId,
          reasonHash: input.reasonHash,
          resolutionEvent: event._id,
        },
        idempotencyKey: `dispute:${disputeId}:resolved`,
      });
      await deps.disputes.forgetReason(tenant, disputeId, reasonKey);
      return statuses();
    },

    /**
     * After an erasure marked its records deleted: every open dispute over an erased record is closed without a
     * decision (`void`), and the other side, unless erased too or still in another open dispute, is reinstated
     * (`disputed → active`). Returns the closed disputes, whose workflows the erasure then tells.
     */
    async closeDisputesOfErased(input: { tenant: string; requestId: string }): Promise<{ disputeIds: string[] }> {
      const { tenant, requestId } = input;
      const erased = new Set((await deps.erasureSets.get(tenant, requestId, 'erase')).ids);
      // Open disputes are few (each waits for a person), so one query for all of them beats a lookup per erased id.
      const open = await deps.disputes.listOpen(tenant, 100_000);
      const closing = open.filter((d) => d.memoryIds.some((id) => erased.has(id)));
      const closingIds = new Set(closing.map((d) => d._id));
      for (const dispute of closing) {
        for (const id of dispute.memoryIds.filter((m) => !erased.has(m))) {
          const others = (await deps.disputes.openFor(tenant, id)).filter((d) => !closingIds.has(d._id));
          if (others.length > 0) continue;
          const cause = `dispute:${dispute._id}:void`;
          if (await move(tenant, id, 'active', cause, `erasure:${requestId}`, { dispute: dispute._id }))
            await reindex(tenant, [id]);
        }
        await deps.disputes.voidDispute(tenant, dispute._id, requestId);
        await deps.audit.append({
          tenant,
          actor: `erasure:${requestId}`,
          action: 'dispute.voided',
          target: dispute._id,
          outcome: 'ok',
          details: { requestId },
          idempotencyKey: `dispute:${dispute._id}:voided`,
        });
      }
      return { disputeIds: closing.map((d) => d._id).sort() };
    },

    async sendDisputeNotice(input: {
      tenant: string;
      disputeId: string;
      kind: 'opened' | 'reminder' | 'escalation';
    }): Promise<void> {
      const text = {
        opened: `Dispute ${input.disputeId} (tenant ${input.tenant}) links two memories that disagree; it waits for adjudication.`,
        reminder: `Dispute ${input.disputeId} (tenant ${input.tenant}) is still waiting for adjudication.`,
        escalation: `Dispute ${input.disputeId} (tenant ${input.tenant}) passed its review deadline without adjudication.`,
      }[input.kind];
      await deps.notifier.send({
        to: input.kind === 'escalation' ? deps.escalationEmail : deps.reviewersEmail,
        subject: `Lethe: dispute ${input.kind} for ${input.disputeId}`,
        text,
      });
    },
  };

  /** Whether a running erasure fences one of the records, or a subject of them. */
  async function erasureOfDispute(tenant: string, records: readonly MemoryRecord[]): Promise<boolean> {
    const keys: FenceKey[] = records.flatMap((r) => [
      { kind: 'record' as const, value: r._id },
      ...r.subjects.map((subject) => ({ kind: 'subject' as const, value: subject })),
    ]);
    return (await deps.fences.firstFenced(tenant, keys)) !== null;
  }

  async function reindex(tenant: string, ids: readonly string[]): Promise<void> {
    await indexUnlessErased(deps.index, deps.memories, tenant, ids);
  }
}
