/**
 * Writes for the admission comparison of `bench/lifecycle.bench.ts`: the batch an agent submits (low-impact
 * preferences, each with the event it was learned from), the documents admission stores for it built directly
 * (what a plain insert writes), and the per-activity timings read back from an ingestion workflow's history.
 */
import type { TenantMacs } from '../../src/substrate/fingerprint.js';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { PolicyDocument } from '../../src/governance/policy/evaluate.js';
import { admittedRecord } from '../../src/ingestion/admit-batch.js';
import { WriteBatchSchema, type WriteBatch } from '../../src/ingestion/write-schemas.js';
import { eventRecordOf } from '../../src/substrate/events/event-store.js';
import type { EventRecord, MemoryRecord } from '../../src/substrate/model/records.js';

/**
 * Attributes the preferences state. None is high-impact under `memory-impact`; contradiction detection checks
 * the records of one attribute in order and different attributes in parallel, so their number sets its fan-out.
 */
export const ATTRIBUTES = [
  'contact-channel',
  'contact-time',
  'language',
  'timezone',
  'newsletter',
  'support-tier',
  'preferred-agent',
  'billing-format',
] as const;
const NAMESPACES = ['support', 'crm', 'success', 'sales'] as const;
const VALUES = ['e-mail', 'phone', 'chat', 'letter', 'morning', 'evening', 'en', 'pt', 'de', 'weekly', 'none'];

/**
 * `size` events and `size` memories: memory i is a preference about subject `customer-<batch>-<i>` (one per memory
 * across batches of any size, so no write contradicts another: every record is admitted active and none opens a
 * dispute) derived from event i, which states it (so the derivation audit finds it supported, as it does a faithful
 * extraction, and `enforce` admits it). Parsed by the API's schema, so that defaults are applied as for a real request.
 */
export function admissionBatch(batch: number, size: number): WriteBatch {
  const events = [];
  const memories = [];
  for (let i = 0; i < size; i++) {
    const n = batch * 100_000 + i;
    const namespace = NAMESPACES[i % NAMESPACES.length]!;
    const attribute = ATTRIBUTES[i % ATTRIBUTES.length]!;
    const value = VALUES[(i * 7) % VALUES.length]!;
    const subjects = [`customer-${batch}-${i}`];
    const occurredAt = new Date(Date.UTC(2025, 0, 1) + batch * 86_400_000 + i * 60_000).toISOString();
    const content = `Customer ${n} prefers ${value} for ${attribute} (${randomUUID().slice(0, 8)}).`;
    events.push({
      source: 'bench-chat',
      externalId: `conv-${randomUUID()}`,
      namespace,
      subjects,
      content: `Noted in conversation ${n}: ${content}`,
      occurredAt,
      sensitivity: 'internal',
      trustTier: 1,
    });
    memories.push({
      namespace,
      subjects,
      kind: 'preference',
      attribute,
      content,
      validFrom: occurredAt,
      purpose: 'customer-support',
      sensitivity: 'internal',
      jurisdiction: 'PT',
      trustTier: 1,
      confidence: 0.8,
      provenance: { eventIds: [`#${i}`], parentIds: [], derivationRule: 'bench-extract' },
    });
  }
  return WriteBatchSchema.parse({ events, memories });
}

/**
 * The event and memory documents admission stores for `batch`, built directly with the same fields: event ids and
 * idempotency keys by the event store's scheme; status, impact reason, `expiresAt`, `expiryBucket` and retention
 * class from the same policies admission evaluates.
 */
export function directDocuments(
  macs: TenantMacs,
  tenant: string,
  writer: string,
  batch: WriteBatch,
  policies: { impact: PolicyDocument; retention: PolicyDocument },
): { events: EventRecord[]; memories: MemoryRecord[] } {
  const now = new Date();
  const events = batch.events.map((e): EventRecord =>
    eventRecordOf(
      macs,
      {
        ...e,
        tenant,
        occurredAt: new Date(e.occurredAt),
        recordedBy: writer,
        scope: e.scope === 'tenant' ? 'tenant' : `principal:${writer}`,
      },
      now,
      null,
    ),
  );
  // The same record admission writes (status, expiry, governance fields), built by the same function.
  const memories = batch.memories.map((m, i): MemoryRecord => {
    const { record, decision } = admittedRecord(
      policies,
      { tenant, writer, id: `mem_${randomUUID()}`, eventIds: [events[i]!._id], at: now },
      m,
      macs,
    );
    if (record.status !== 'active') throw new Error(`bench memory ${i} is not low-impact (${decision.ruleId})`);
    return record;
  });
  return { events, memories };
}

/** Scheduled → completed time per activity type of one workflow run, and how many attempts went beyond the first. */
export interface ActivityTimings {
  /** Milliseconds, summed over the activities of each type. */
  byType: Map<string, number>;
  /** Workflow started → closed (ms), by the server's clock. */
  workflowMs: number;
  retries: number;
  failures: number;
}

export interface ProtoTimestamp {
  seconds?: number | { toNumber(): number } | null;
  nanos?: number | null;
}

/** A protobuf timestamp of a history event, in ms. */
export const msOf = (ts: ProtoTimestamp | null | undefined): number => {
  if (!ts) return NaN;
  const s = ts.seconds;
  const seconds = s == null ? 0 : typeof s === 'number' ? s : s.toNumber();
  return seconds * 1000 + (ts.nanos ?? 0) / 1e6;
};

export async function activityTimings(handle: WorkflowHandle): Promise<ActivityTimings> {
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Map<string, { type: string; at: number }>();
  const byType = new Map<string, number>();
  let retries = 0;
  let failures = 0;
  for (const e of events) {
    const id = String(e.eventId);
    const at = msOf(e.eventTime);
    if (e.activityTaskScheduledEventAttributes) {
      scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
    } else if (e.activityTaskStartedEventAttributes) {
      if ((e.activityTaskStartedEventAttributes.attempt ?? 1) > 1) retries++;
    } else if (e.activityTaskCompletedEventAttributes) {
      const s = scheduled.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId));
      if (s) byType.set(s.type, (byType.get(s.type) ?? 0) + (at - s.at));
    } else if (e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes) {
      failures++;
    }
  }
  const workflowMs = events.length > 0 ? msOf(events[events.length - 1]!.eventTime) - msOf(events[0]!.eventTime) : NaN;
  return { byType, workflowMs, retries, failures };
}

/**
 * Each completed activity of `type`, in history order: scheduled → completed (ms), so that a
 * per-page cost can be shown across a long run (flat, or growing with the pages already done).
 */
export async function activityDurations(handle: WorkflowHandle, type: string): Promise<number[]> {
  const history = await handle.fetchHistory();
  const scheduled = new Map<string, { type: string; at: number }>();
  const durations: number[] = [];
  for (const e of history.events ?? []) {
    const at = msOf(e.eventTime);
    if (e.activityTaskScheduledEventAttributes) {
      scheduled.set(String(e.eventId), { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
    } else if (e.activityTaskCompletedEventAttributes) {
      const s = scheduled.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId));
      if (s?.type === type) durations.push(at - s.at);
    }
  }
  return durations;
}
