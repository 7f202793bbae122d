import { ApplicationFailure, Context } from '@temporalio/activity';
import type { AuditEntryInput, AuditLog } from '../src/governance/audit/audit-log.port.js';
import {
  ERASURE_PENDING,
  addBuckets,
  bucketStart,
  expiryBucketOf,
  isExpiryBucket,
} from '../src/governance/retention/expiry-bucket.js';
import type { ExpiryQueue, QueuedEntry } from '../src/governance/retention/expiry-queue.js';
import type { SweepStateStore, SweepTotals } from '../src/governance/retention/sweep-state-store.js';
import { mapBounded } from '../src/substrate/mongo/collections.js';
import { ErrorType } from '../src/shared/errors.js';

export type { SweepTotals } from '../src/governance/retention/sweep-state-store.js';

/** How the sweep hands records to the erasure workflow (wired to the erasure gateway at the composition root). */
export interface RetentionErasurePort {
  /** Files one erasure request on ground `retention-expiry`, by memory ids, as the sweep's system principal. */
  file(tenant: string, memoryIds: string[]): Promise<{ requestId: string }>;
  /** Erasures of the tenant still at work (received, running, needs-operator): the sweep's back-pressure. */
  open(tenant: string): Promise<number>;
}

export interface RetentionActivityDeps {
  queue: ExpiryQueue;
  sweeps: SweepStateStore;
  audit: AuditLog;
  erasures: RetentionErasurePort;
  /** Updates in flight per page (FerretDB: bounded parallel `_id` writes are the fast path). */
  concurrency?: number;
}

/** Buckets already swept are looked at again this far back, for records whose expiry was set a little late. */
export const LOOKBACK_HOURS = 24;
/** Empty buckets one activity walks through before it reports where it stopped. */
const MAX_EMPTY_BUCKETS = 2000;
const MAX_PAGE = 5000;
/** Writes between heartbeats. */
const HEARTBEAT_EVERY = 200;
const ACTOR = 'retention-sweep';
const GONE: ReadonlySet<string> = new Set(['deleted', 'purged']);

export interface PlanInput {
  tenant: string;
  /** The workflow's (deterministic) time, ISO 8601. */
  now: string;
  /** Sweep again from this instant or bucket instead of the watermark (after a migration set past expiries). */
  rescanFrom?: string;
}

export interface MarkPageInput {
  tenant: string;
  bucket: string;
  /** Exclusive: the bucket of the sweep's start time, which is not over yet. */
  until: string;
  pageSize: number;
}

export interface MarkPageResult extends SweepTotals {
  /** Where the next page starts (the same bucket if it may hold more), or null once `until` is reached. */
  next: string | null;
}

export interface HandOffInput {
  tenant: string;
  pageSize: number;
  maxOpenErasures: number;
}

export interface HandOffResult {
  /** Too many erasures of the tenant are at work: nothing was filed, try again later. */
  throttled: boolean;
  handedOff: number;
  gone: number;
  requestId: string | null;
  /** Whether records may remain in the queue. */
  more: boolean;
}

/** `expired`: the transition about to be made; `void`: it was not (the record changed status in between). */
function transitionEntry(tenant: string, id: string, bucket: string, kind: 'expired' | 'void'): AuditEntryInput {
  return kind === 'expired'
    ? {
        tenant,
        actor: ACTOR,
        action: 'memory.expired',
        target: id,
        outcome: 'ok',
        details: { from: 'active', to: 'expired', bucket },
        idempotencyKey: `retention:${id}:expired`,
      }
    : {
        tenant,
        actor: ACTOR,
        action: 'memory.expiry-void',
        target: id,
        outcome: 'refused',
        details: { reason: 'status changed before the compare-and-set' },
        idempotencyKey: `retention:${id}:expiry-void`,
      };
}

function bad(field: string, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${field}: ${message}`, ErrorType.Validation);
}

function pageSizeOf(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE) throw bad('pageSize', `a whole number from 1 to ${MAX_PAGE}`);
  return n;
}

/**
 * The retention sweep's activities: coarse (a page of up to `pageSize` records each), idempotent (every write is a
 * compare-and-set on the record's queue slot), and returning counts only. A record leaves the queue only after its
 * erasure request is filed, so a crash at any point loses nothing; a retry may at worst file the same ids again,
 * which the erasure gateway answers with the request already open.
 */
export function createRetentionActivities(deps: RetentionActivityDeps) {
  const concurrency = deps.concurrency ?? 16;

  const heartbeat = (details: unknown) => {
    try {
      Context.current().heartbeat(details);
    } catch {
      // Called outside an activity (unit use): nothing to report to.
    }
  };

  /** `mapBounded` in slices, heartbeating between them: a page of thousands of writes outlasts a heartbeat timeout. */
  async function eachBounded<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
    const results: R[] = [];
    for (let at = 0; at < items.length; at += HEARTBEAT_EVERY) {
      results.push(...(await mapBounded(items.slice(at, at + HEARTBEAT_EVERY), concurrency, fn)));
      heartbeat({ done: results.length });
    }
    return results;
  }

  /** One record of an hour bucket: expire it, hand it on, requeue it or drop it from the queue. */
  async function markOne(tenant: string, bucket: string, cutoff: Date, entry: QueuedEntry) {
    if (GONE.has(entry.status)) {
      await deps.queue.move(tenant, entry.id, bucket, null);
      return 'gone' as const;
    }
    if (!entry.expiresAt || entry.expiresAt >= cutoff) {
      // Filed under the wrong hour (its expiry was changed): put it where its expiry says, or out of the queue.
      const right = entry.expiresAt ? expiryBucketOf(entry.expiresAt) : null;
      await deps.queue.move(tenant, entry.id, bucket, right === bucket ? null : right);
      return 'requeued' as const;
    }
    if (entry.status === 'active' && (await deps.queue.expire(tenant, entry.id, bucket, 'retention-expiry'))) {
      return 'expired' as const;
    }
    // Any other live status (candidate, disputed, superseded, rejected, expired) goes to erasure as it is: the
    // lifecycle moves them straight to `deleted`.
    await deps.queue.move(tenant, entry.id, bucket, ERASURE_PENDING);
    return 'pending' as const;
  }

  return {
    /** Where this run starts (the watermark less a look-back) and ends (the current, unfinished hour). */
    async planRetentionSweep(input: PlanInput): Promise<{ from: string; until: string }> {
      const now = new Date(input.now);
      if (Number.isNaN(now.getTime())) throw bad('now', 'an ISO 8601 instant');
      const until = expiryBucketOf(now);
      await deps.sweeps.register(input.tenant);
      if (input.rescanFrom !== undefined) {
        const from = isExpiryBucket(input.rescanFrom) ? input.rescanFrom : expiryBucketOf(new Date(input.rescanFrom));
        if (!isExpiryBucket(from)) throw bad('rescanFrom', 'an ISO 8601 instant or a YYYY-MM-DDTHH bucket');
        return { from: from < until ? from : until, until };
      }
      const state = await deps.sweeps.get(input.tenant);
      // Before its first complete sweep, a tenant's records cannot expire earlier than its registration (they were
      // written after it, and every period is positive): start there. Older expiries come only from a migration,
      // which passes `rescanFrom`.
      const since = state?.sweptBefore ?? (state ? expiryBucketOf(state.registeredAt) : until);
      return { from: addBuckets(since < until ? since : until, -LOOKBACK_HOURS), until };
    },

    /** One page of one hour bucket: expired records become `expired` and wait in `ERASURE_PENDING`. */
    async markExpiredPage(input: MarkPageInput): Promise<MarkPageResult> {
      const pageSize = pageSizeOf(input.pageSize);
      if (!isExpiryBucket(input.bucket) || !isExpiryBucket(input.until)) throw bad('bucket', 'a YYYY-MM-DDTHH bucket');
      const totals: MarkPageResult = {
        scanned: 0,
        expired: 0,
        handedOff: 0,
        erasures: 0,
        requeued: 0,
        gone: 0,
        next: null,
      };
      const cutoff = bucketStart(input.until);
      let bucket = input.bucket;
      let entries: QueuedEntry[] = [];
      for (let empty = 0; bucket < input.until; bucket = addBuckets(bucket, 1)) {
        entries = await deps.queue.take(input.tenant, bucket, pageSize);
        if (entries.length > 0) break;
        if (++empty % 100 === 0) heartbeat({ bucket });
        if (empty >= MAX_EMPTY_BUCKETS) return { ...totals, next: addBuckets(bucket, 1) };
      }
      if (entries.length === 0) return totals;

      // Write-ahead audit: one entry per record about to move `active` → `expired`, keyed by record, before the move.
      // A crash after the moves cannot lose an entry (the moved records leave the bucket, so a retry would not see
      // them); a retry re-appends only for records still in the bucket, and the keys make that a no-op.
      const due = entries.filter((e) => e.status === 'active' && e.expiresAt !== null && e.expiresAt < cutoff);
      await deps.audit.appendMany(due.map((e) => transitionEntry(input.tenant, e.id, bucket, 'expired')));
      // The due records move in bulk (guards in one insert, then one update each that moves status and slot); the
      // rest, and any bulk move that found its record changed since the read, go one by one.
      const dueIds = new Set(due.map((e) => e.id));
      const bulk =
        due.length > 0
          ? await deps.queue.expireMany(input.tenant, due, bucket, 'retention-expiry')
          : { expired: [], retry: [] };
      heartbeat({ expired: bulk.expired.length });
      const again = new Set(bulk.retry);
      const single = entries.filter((e) => !dueIds.has(e.id) || again.has(e.id));
      const singleOutcomes = await eachBounded(single, (e) => markOne(input.tenant, bucket, cutoff, e));
      const outcomeOf = new Map<string, Awaited<ReturnType<typeof markOne>>>(
        bulk.expired.map((id) => [id, 'expired' as const]),
      );
      single.forEach((e, i) => outcomeOf.set(e.id, singleOutcomes[i]!));
      const outcomes = entries.map((e) => outcomeOf.get(e.id));
      const moved = new Set(entries.filter((_, i) => outcomes[i] === 'expired').map((e) => e.id));
      // A record that changed status between the read and the compare-and-set did not expire: say so.
      const lost = due.filter((e) => !moved.has(e.id));
      await deps.audit.appendMany(lost.map((e) => transitionEntry(input.tenant, e.id, bucket, 'void')));
      totals.scanned = entries.length;
      totals.expired = moved.size;
      totals.requeued = outcomes.filter((o) => o === 'requeued').length;
      totals.gone = outcomes.filter((o) => o === 'gone').length;
      // A full page may leave more in this bucket; a short one drained it.
      const next = entries.length === pageSize ? bucket : addBuckets(bucket, 1);
      return { ...totals, next: next < input.until ? next : null };
    },

    /** Records the watermark once every bucket before `until` has been drained. */
    async completeMarking(input: { tenant: string; until: string }): Promise<void> {
      await deps.sweeps.advance(input.tenant, input.until);
    },

    /** Files one erasure for up to `pageSize` expired records, unless too many of the tenant's erasures are at work. */
    async handOffExpired(input: HandOffInput): Promise<HandOffResult> {
      const pageSize = pageSizeOf(input.pageSize);
      if ((await deps.erasures.open(input.tenant)) >= input.maxOpenErasures) {
        return { throttled: true, handedOff: 0, gone: 0, requestId: null, more: true };
      }
      const entries = await deps.queue.take(input.tenant, ERASURE_PENDING, pageSize);
      if (entries.length === 0) return { throttled: false, handedOff: 0, gone: 0, requestId: null, more: false };
      const live = entries.filter((e) => !GONE.has(e.status)).map((e) => e.id);
      // Sorted, so that a retried page names the same selector and the gateway returns the request already open.
      live.sort();
      let requestId: string | null = null;
      if (live.length > 0) {
        ({ requestId } = await deps.erasures.file(input.tenant, live));
        await deps.audit.append({
          tenant: input.tenant,
          actor: ACTOR,
          action: 'retention.erasure-filed',
          target: requestId,
          outcome: 'ok',
          details: { records: live.length },
          idempotencyKey: `retention:filed:${requestId}`,
        });
      }
      heartbeat({ requestId });
      // Only now do the records leave the queue.
      await eachBounded(entries, (e) => deps.queue.move(input.tenant, e.id, ERASURE_PENDING, null));
      return {
        throttled: false,
        handedOff: live.length,
        gone: entries.length - live.length,
        requestId,
        more: entries.length === pageSize,
      };
    },

    /** The run's counts: on the tenant's sweep state and, once, in the audit chain. */
    async recordSweep(input: { tenant: string; until: string; runId: string; totals: SweepTotals }): Promise<void> {
      await deps.sweeps.recordRun(input.tenant, input.totals);
      await deps.audit.append({
        tenant: input.tenant,
        actor: ACTOR,
        action: 'retention.swept',
        target: null,
        outcome: 'ok',
        details: { until: input.until, ...input.totals },
        idempotencyKey: `retention:swept:${input.runId}`,
      });
    },
  };
}
