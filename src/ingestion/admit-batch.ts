import type { ClaimLookup } from '../substrate/memories/claim-lookup.js';
import type { Metrics } from '../observability/metrics.port.js';
import { flappingAnomaly, inheritedTrust, type MemoryInputFacts } from './input-trust.js';
import type { AuditEntryInput, AuditLog } from '../governance/audit/audit-log.port.js';
import { evaluatePolicy, type PolicyDocument } from '../governance/policy/evaluate.js';
import type { EventStore } from '../substrate/events/event-store.js';
import { idempotencyKeyOf } from '../substrate/events/event-store.js';
import { type TenantMacs } from '../substrate/fingerprint.js';
import { sha256Hex } from '../shared/sha256.js';
import { contentHashOf, storedIdempotencyKeyForms, subjectContentParts } from '../substrate/content-hash.js';
import type { LineageStore } from '../substrate/lineage/lineage-store.js';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import { principalScope, type EventRecord, type MemoryRecord } from '../substrate/model/records.js';
import { independentAgreement } from '../substrate/views/consolidation-plan.js';
import { normalisedContent } from '../substrate/views/extractive-summariser.js';
import type { TombstoneSpec, TombstoneStore } from '../substrate/tombstones/tombstone-store.js';
import { reviewPlan, type ReviewPlan } from '../governance/review/review-plan.js';
import { mapBounded } from '../substrate/mongo/collections.js';
import type { Role } from '../governance/auth/principal.js';
import type { EventInput, MemoryInput } from './write-schemas.js';
export { admittedRecord } from './admitted-record.js';
import { admittedRecord } from './admitted-record.js';
import type { ErasureFenceStore, FenceKey } from '../governance/erasure/erasure-fence-store.js';
import type { LeaseStanding } from '../governance/erasure/admission-lease-store.js';
import {
  auditBatchDerivations,
  contradictedObligation,
  type DerivationDeps,
  type DerivationOutcome,
} from './derivation-admission.js';
import { noSuchRecord, type Refusal } from './refusal.js';
import type { RestrictionSnapshot } from '../governance/rights/restriction.js';
import {
  eventAsProcessed,
  mayProcess,
  type ProcessedRecord,
  type ProcessingContext,
} from '../governance/read/processing-judge.js';

/** Records written at once within a batch: enough to hide round trips, few enough for the local server. */
const WRITE_CONCURRENCY = 16;

/** A batch as the API staged it: validated, with memory ids assigned up front so that retries are idempotent. */
export interface StagedBatch {
  /** The writer's roles when the batch was accepted: the write policy decides on them. */
  roles: Role[];
  events: EventInput[];
  memories: (MemoryInput & { id: string })[];
}

export type { Refusal } from './refusal.js';

export interface BatchResult {
  refused: Refusal | null;
  events: { id: string; outcome: 'created' | 'duplicate' | 'correction' }[];
  /** Status at admission; the ingestion workflow reports `disputed` for a write that contradicted a held claim. */
  memories: {
    id: string;
    status: 'active' | 'candidate' | 'disputed';
    outcome: 'created' | 'exists';
    /** The derivation audit's label, when one ran (a label only: the obligations stay on the record). */
    derivation?: string;
  }[];
  /** Sign-off to start for each candidate (ids and durations only). */
  reviews: { memoryId: string; writtenBy: string; plan: ReviewPlan }[];
}

export interface AdmissionDeps {
  events: EventStore;
  memories: MemoryStore;
  lineage: LineageStore;
  tombstones: TombstoneStore;
  /** The tenants' keys: content hashes are stored keyed under them (`content-hash.ts`). */
  tenantMacs: TenantMacs;
  /** Fences of running erasure requests: a write about their subjects or citing their records is refused. */
  fences: ErasureFenceStore;
  audit: AuditLog;
  /** Claims about a subject's attribute: a value that keeps changing is an anomaly (absent: not checked). */
  claims?: ClaimLookup;
  /** Where a quarantine is counted, by reason code (the operator's alert). */
  metrics?: Pick<Metrics, 'quarantined'>;
  /** The policies admission judges by: impact, write, retention, and the sign-off's deadlines. */
  rules: {
    impact: PolicyDocument;
    write: PolicyDocument;
    retention: PolicyDocument;
    reviewSla: PolicyDocument;
    reviewTimeout: PolicyDocument;
  };
  /**
   * The write-side defences against poisoning: taint, quarantine and attribute flapping. On unless set to false,
   * which only a benchmark does, to measure what they buy (`bench:poisoning`); no setting reaches it.
   */
  defences?: boolean;
  /** The write-time derivation audit; absent, admission does not audit derivations. */
  derivation?: DerivationDeps;
  /** The tenant's restrictions and objections: a restricted subject's records are cited by no new write. */
  restrictions: { snapshot(tenant: string): Promise<RestrictionSnapshot> };
  now?: () => Date;
}

/** A memory may cite an event of its own batch as `#<index>`. */
const BATCH_REF = /^#(\d+)$/;

/** An erasure tombstones the forms its rows stored: each is looked for (see `content-hash.ts`). */
function eventTombstones(macs: TenantMacs, tenant: string, e: EventInput): TombstoneSpec[] {
  const plainKey = idempotencyKeyOf(e.source, e.externalId, sha256Hex(e.content));
  return [
    ...storedIdempotencyKeyForms(macs, tenant, plainKey).map((key): TombstoneSpec => ({
      kind: 'idempotency-key',
      parts: [key],
    })),
    ...memoryTombstones(macs, tenant, e),
  ];
}

function memoryTombstones(macs: TenantMacs, tenant: string, m: Pick<MemoryInput, 'subjects' | 'content'>) {
  return subjectContentParts(macs, tenant, m.subjects, m.content).map((parts): TombstoneSpec => ({
    kind: 'subject-content',
    parts,
  }));
}

/**
 * Checks a whole batch before writing any of it (erasure fences, tombstones, lineage, trust), writes it,
 * checks the fences again, then makes one chained audit append keyed by stage and id.
 *
 * No write outlives an erasure's fence. Of the two ways to make that hold, admission takes the lease: it opens
 * one before its first fence check and closes it after its last, and an erasure lowers its fences only once the
 * leases open at that moment are closed or revoked (`ErasureFenceStore.lower`). So the check after writing runs
 * while every fence raised meanwhile is still up, however long the derivation audit took; a lease the erasure
 * had to revoke (its attempt stopped renewing it, or outlasted the wait) refuses the batch on that check or on a
 * retry. The other way, re-checking tombstones and cited records after writing, misses a new record about the
 * subject written while the fence stood and checked after it came down: nothing tombstoned names it.
 */
export async function admitBatch(
  deps: AdmissionDeps,
  tenant: string,
  principal: string,
  stageId: string,
  batch: StagedBatch,
): Promise<BatchResult> {
  const leases = deps.fences.admissions;
  // Opened before the first fence check: an erasure that raises a fence after that check waits for this lease.
  const opened = await leases.open(tenant, stageId);
  const renewal = setInterval(() => void leases.renew(tenant, stageId).catch(() => undefined), leases.renewEveryMs);
  renewal.unref();
  try {
    const result = await admitWithinLease(deps, tenant, principal, stageId, batch, opened);
    await leases.close(tenant, stageId);
    return result;
  } finally {
    // A failed attempt leaves its lease to expire: an erasure then revokes it, and the retry takes back its writes.
    clearInterval(renewal);
  }
}

async function admitWithinLease(
  deps: AdmissionDeps,
  tenant: string,
  principal: string,
  stageId: string,
  batch: StagedBatch,
  opened: LeaseStanding,
): Promise<BatchResult> {
  const leaseLost = leaseRefusal(opened);
  const check = leaseLost ? { refusal: leaseLost } : await checkBatch(deps, tenant, principal, batch);
  const refusal = check.refusal;
  if (refusal) {
    // A fence refusal on a retry may follow an attempt that wrote this stage's records and then failed: take them
    // back (memories and events) so nothing lands behind the fence.
    if (refusal.type === 'Conflict') await takeBack(deps, tenant, stageId, batch);
    return refuse(deps, tenant, principal, stageId, refusal);
  }
  const audits = deps.derivation
    ? await auditBatchDerivations(
        { ...deps, derivation: deps.derivation },
        tenant,
        batch,
        (deps.now ?? (() => new Date()))(),
        principal,
      )
    : [];
  const contradicted = audits.findIndex((a) => a.effect === 'refuse');
  if (contradicted >= 0)
    return refuse(deps, tenant, principal, stageId, derivationRefusal(contradicted, audits[contradicted]!));
  const written = await writeBatch(deps, tenant, principal, stageId, batch, audits, {
    inputs: check.inputs ?? [],
    anomalies: check.anomalies ?? [],
  });
  // Checked again after writing: an erasure raises its fence before it locates, so a write either landed
  // before the fence (and the erasure's locate sees it) or sees the fence here and takes itself back. The fences
  // are read before the lease: a fence lowered before this read was lowered after the lease was revoked.
  const repaired = audits.flatMap((a) => (a.effect === 'admit' ? a.verdict.repairedEvidenceIds : []));
  const late =
    (await fenceRefusal(deps, tenant, batch, repaired)) ??
    leaseRefusal(await deps.fences.admissions.standing(tenant, stageId));
  if (late) {
    await takeBack(deps, tenant, stageId, batch);
    return refuse(deps, tenant, principal, stageId, late);
  }
  if (written.audit.length > 0) await deps.audit.appendMany(written.audit);
  const reviews = batch.memories
    .filter((_, i) => written.memories[i]!.status === 'candidate')
    .map((m) => ({
      memoryId: m.id,
      writtenBy: principal,
      plan: reviewPlan(deps.rules.reviewSla, deps.rules.reviewTimeout, m.sensitivity),
    }));
  return { refused: null, events: written.events, memories: written.memories, reviews };
}

/** An admission whose lease an erasure revoked (or that has none left) may have written past that erasure's fences. */
function leaseRefusal(standing: LeaseStanding): Refusal | null {
  if (standing.state === 'open') return null;
  const by = standing.state === 'revoked' ? `erasure request ${standing.requestId}` : 'an erasure request';
  return {
    type: 'Conflict',
    field: 'batch',
    tellsOfErasure: 'record',
    message: `batch: ${by} completed while this batch was being admitted; nothing of it was kept, submit it again`,
  };
}

/** A contradicted memory is refused, naming the obligation by id and kind and the policy that refused. */
function derivationRefusal(index: number, audit: DerivationOutcome): Refusal {
  const field = `memories.${index}.content`;
  const d = audit.decision;
  return {
    type: 'Conflict',
    field,
    message: `${field}: ${contradictedObligation(audit.verdict)} in the history before the memory (${d.policyId} v${d.policyVersion}, rule ${d.ruleId})`,
    policy: { id: d.policyId, version: d.policyVersion, rule: d.ruleId },
  };
}

/**
 * Removes what this stage's admission wrote, in this attempt or an earlier one: its memories (their ids are the
 * stage's own) with the lineage edges they registered, and the events it recorded (not an equal event recorded
 * before by another write).
 */
async function takeBack(deps: AdmissionDeps, tenant: string, stageId: string, batch: StagedBatch): Promise<void> {
  const memoryIds = batch.memories.map((m) => m.id);
  if (memoryIds.length > 0) {
    await deps.memories.withdraw(tenant, memoryIds);
    await deps.lineage.forget(tenant, memoryIds);
  }
  const eventIds = batch.events.map((e) =>
    deps.events.idOf(tenant, idempotencyKeyOf(e.source, e.externalId, sha256Hex(e.content))),
  );
  if (eventIds.length > 0) await deps.events.withdrawRecordedBy(tenant, stageId, eventIds);
}

async function refuse(
  deps: AdmissionDeps,
  tenant: string,
  principal: string,
  stageId: string,
  refusal: Refusal,
): Promise<BatchResult> {
  await deps.audit.append({
    tenant,
    actor: principal,
    action: 'write.refused',
    outcome: 'refused',
    details: {
      stageId,
      type: refusal.type,
      field: refusal.field,
      ...(refusal.policy
        ? { policyId: refusal.policy.id, policyVersion: refusal.policy.version, rule: refusal.policy.rule }
        : {}),
    },
    idempotencyKey: `stage:${stageId}:refused`,
  });
  return { refused: refusal, events: [], memories: [], reviews: [] };
}

interface WrittenBatch {
  events: BatchResult['events'];
  memories: { id: string; status: 'active' | 'candidate'; outcome: 'created' | 'exists'; derivation?: string }[];
  audit: AuditEntryInput[];
}

/** Writes in an order that a retry repairs: events, lineage, records; the audit entries are returned. */
async function writeBatch(
  deps: AdmissionDeps,
  tenant: string,
  principal: string,
  stageId: string,
  batch: StagedBatch,
  audits: DerivationOutcome[],
  checked: { inputs: readonly MemoryInputFacts[][]; anomalies: readonly string[][] },
): Promise<WrittenBatch> {
  const now = deps.now ?? (() => new Date());
  const audit: AuditEntryInput[] = [];
  // Their data keys in one round trip, rather than one each as they are recorded.
  await deps.events.prepare(tenant, batch.events);
  // All at once (repeats of one external id stay in order: corrections).
  const written = await deps.events.recordMany(
    batch.events.map((e) => ({
      ...e,
      tenant,
      occurredAt: new Date(e.occurredAt),
      recordedBy: principal,
      scope: e.scope === 'tenant' ? 'tenant' : principalScope(principal),
      stageId,
    })),
  );
  const recorded: EventRecord[] = written.map((w) => w.event);
  const eventResults: BatchResult['events'] = written.map(({ event, outcome }) => ({ id: event._id, outcome }));
  for (const [i, event] of recorded.entries()) {
    const outcome = eventResults[i]!.outcome;
    if (outcome !== 'duplicate') {
      audit.push({
        tenant,
        actor: principal,
        action: outcome === 'correction' ? 'event.corrected' : 'event.recorded',
        target: event._id,
        outcome: 'ok',
        details: { stageId, correctionOf: event.correctionOf },
        idempotencyKey: `stage:${stageId}:${event._id}`,
      });
    }
  }

  const memoryResults: BatchResult['memories'] = new Array(batch.memories.length);
  const memoryAudit: AuditEntryInput[] = new Array(batch.memories.length);
  const admitted = batch.memories.map((m, index) => {
    const eventIds = m.provenance.eventIds.map((ref) => {
      const local = BATCH_REF.exec(ref);
      return local ? recorded[Number(local[1])]!._id : ref;
    });
    const derivation = audits[index];
    const admission = admittedRecord(
      { impact: deps.rules.impact, retention: deps.rules.retention },
      {
        tenant,
        writer: principal,
        id: m.id,
        eventIds,
        at: now(),
        stageId,
        inherited:
          deps.defences === false
            ? { taint: [], quarantine: [] }
            : inheritedTrust(m.content, checked.inputs[index] ?? [], checked.anomalies[index] ?? []),
        ...(derivation ? { derivation } : {}),
      },
      m,
      deps.tenantMacs,
    );
    return {
      ...admission,
      inputs: [...eventIds, ...m.provenance.parentIds, ...(admission.record.provenance.repairedEventIds ?? [])],
    };
  });
  // Lineage first, for the whole batch: a record never exists without its inputs registered (repairing evidence is an
  // input too). Then the records, in one unordered insert per thousand.
  await deps.lineage.registerMany(
    tenant,
    admitted.map((a) => ({ child: a.record._id, inputs: a.inputs })),
  );
  const outcomes = await deps.memories.insertMany(admitted.map((a) => a.record));
  batch.memories.forEach((m, index) => {
    const { record, decision, retention } = admitted[index]!;
    const derivation = audits[index];
    const status = record.status as 'active' | 'candidate';
    const outcome = outcomes[index]!;
    if (outcome === 'created') for (const reason of record.quarantinedFor ?? []) deps.metrics?.quarantined(reason);
    memoryResults[index] = {
      id: record._id,
      status,
      outcome,
      ...(derivation ? { derivation: derivation.verdict.label } : {}),
    };
    memoryAudit[index] = {
      tenant,
      actor: principal,
      action: 'memory.created',
      target: record._id,
      outcome: 'ok',
      details: {
        stageId,
        status,
        policyId: decision.policyId,
        policyVersion: decision.policyVersion,
        rule: decision.ruleId,
        retentionPolicyVersion: retention.policyVersion,
        retentionRule: retention.ruleId,
        retentionPeriod: retention.period,
        ...(derivation
          ? {
              derivationLabel: derivation.verdict.label,
              derivationRule: derivation.decision.ruleId,
              derivationPolicyVersion: derivation.decision.policyVersion,
              verifier: `${derivation.verdict.verifier.id}@${derivation.verdict.verifier.version}`,
            }
          : {}),
      },
      idempotencyKey: `stage:${stageId}:${record._id}`,
    };
  });
  audit.push(...memoryAudit);
  return { events: eventResults, memories: memoryResults as WrittenBatch['memories'], audit };
}

/** The keys a batch touches that a running erasure may have fenced, each with the field that names it. */
function fencedKeysOf(batch: StagedBatch, repaired: readonly string[] = []): { key: FenceKey; field: string }[] {
  const keys: { key: FenceKey; field: string }[] = [];
  batch.events.forEach((e, i) => {
    e.subjects.forEach((s, j) => keys.push({ key: { kind: 'subject', value: s }, field: `events.${i}.subjects.${j}` }));
    keys.push({ key: { kind: 'content', value: sha256Hex(e.content) }, field: `events.${i}.content` });
  });
  batch.memories.forEach((m, i) => {
    const f = `memories.${i}`;
    m.subjects.forEach((s, j) => keys.push({ key: { kind: 'subject', value: s }, field: `${f}.subjects.${j}` }));
    keys.push({ key: { kind: 'content', value: sha256Hex(m.content) }, field: `${f}.content` });
    m.provenance.eventIds.forEach((ref, j) => {
      if (!BATCH_REF.test(ref))
        keys.push({ key: { kind: 'record', value: ref }, field: `${f}.provenance.eventIds.${j}` });
    });
    m.provenance.parentIds.forEach((ref, j) =>
      keys.push({ key: { kind: 'record', value: ref }, field: `${f}.provenance.parentIds.${j}` }),
    );
  });
  // Evidence the derivation audit added to a memory's provenance is fenced like a citation.
  for (const id of repaired)
    keys.push({ key: { kind: 'record', value: id }, field: 'memories.provenance.repairedEventIds' });
  return keys;
}

/** A running erasure owns its subject, its content and its closure until it completes. */
async function fenceRefusal(
  deps: AdmissionDeps,
  tenant: string,
  batch: StagedBatch,
  repaired: readonly string[] = [],
): Promise<Refusal | null> {
  const keys = fencedKeysOf(batch, repaired);
  const fenced = await deps.fences.firstFenced(
    tenant,
    keys.map((k) => k.key),
  );
  if (!fenced) return null;
  const field = keys[fenced.index]!.field;
  return {
    type: 'Conflict',
    field,
    tellsOfErasure: 'record',
    message: `${field}: erasure request ${fenced.requestId} is in progress for this ${keys[fenced.index]!.key.kind}; nothing about it may be written until it completes`,
  };
}

/** A batch's check: its first refusal, or what each memory's inputs are (read once, for what the memory inherits). */
type BatchCheck =
  | { refusal: Refusal; inputs?: undefined; anomalies?: undefined }
  | { refusal: null; inputs: MemoryInputFacts[][]; anomalies: string[][] };

async function checkBatch(
  deps: AdmissionDeps,
  tenant: string,
  principal: string,
  batch: StagedBatch,
): Promise<BatchCheck> {
  // A writer cites only what the processing judge lets it cite: what it may read (its own records and the tenant's
  // shared ones), live, unheld, of no restricted or objecting subject, uncontested and not stale.
  const restrictions = await deps.restrictions.snapshot(tenant);
  const citeContext = (m: MemoryInput): ProcessingContext => ({
    tenant,
    scopes: ['tenant', principalScope(principal)],
    purposes: [m.purpose],
    restrictions,
    now: (deps.now ?? (() => new Date()))(),
  });
  const refused = (refusal: Refusal): BatchCheck => ({ refusal });
  const fenced = await fenceRefusal(deps, tenant, batch);
  if (fenced) return refused(fenced);
  // The whole batch's tombstones are looked up at once (one bounded pass when they are many); every item is then
  // checked in parallel, and the first refusal in batch order is reported.
  const eventSpecs = batch.events.map((e) => eventTombstones(deps.tenantMacs, tenant, e));
  const memorySpecs = batch.memories.map((m) => memoryTombstones(deps.tenantMacs, tenant, m));
  // What the memories cite and the claims they are compared with are read for the whole batch too, beside the
  // tombstones (reads only: the checks below then find them here rather than each reading its own).
  const [found, cited] = await Promise.all([
    deps.tombstones.findTombstoned(tenant, [...eventSpecs.flat(), ...memorySpecs.flat()]),
    citedByBatch(deps, tenant, batch),
  ]);
  const tombstoned = new Set(found);
  const eventRefusals = await mapBounded([...batch.events.entries()], WRITE_CONCURRENCY, async ([i]) =>
    eventSpecs[i]!.some((spec) => tombstoned.has(spec))
      ? ({
          type: 'Tombstoned',
          field: `events.${i}`,
          tellsOfErasure: 'record',
          message: `events.${i}: this event was erased and may not be ingested again`,
        } satisfies Refusal)
      : null,
  );
  const firstEventRefusal = eventRefusals.find((r) => r !== null);
  if (firstEventRefusal) return refused(firstEventRefusal);
  const inputs: MemoryInputFacts[][] = batch.memories.map(() => []);
  const anomalies: string[][] = batch.memories.map(() => []);
  const now = (deps.now ?? (() => new Date()))();
  const memoryRefusals = await mapBounded(
    [...batch.memories.entries()],
    WRITE_CONCURRENCY,
    async ([i, m]): Promise<Refusal | null> => {
      const facts = inputs[i]!;
      const field = `memories.${i}`;
      const allowed = evaluatePolicy(deps.rules.write, {
        roles: batch.roles,
        kind: m.kind,
        namespace: m.namespace,
        trustTier: m.trustTier,
      });
      if (allowed.outcome !== 'allow') {
        return {
          type: 'PolicyDenied',
          field,
          message: `${field}: the write policy does not allow this write (${allowed.policyId} v${allowed.policyVersion}, rule ${allowed.ruleId})`,
          policy: { id: allowed.policyId, version: allowed.policyVersion, rule: allowed.ruleId },
        };
      }
      if (memorySpecs[i]!.some((spec) => tombstoned.has(spec))) {
        return {
          type: 'Tombstoned',
          field,
          tellsOfErasure: 'record',
          message: `${field}.content: this content was erased for a subject and may not be learned again`,
        };
      }
      let minTrust = Number.POSITIVE_INFINITY;
      let minConfidence = 1;
      for (const [j, ref] of m.provenance.eventIds.entries()) {
        const local = BATCH_REF.exec(ref);
        const f = `${field}.provenance.eventIds.${j}`;
        if (local) {
          const e = batch.events[Number(local[1])];
          if (!e) return { type: 'LineageRefused', field: f, message: `${f}: no event #${local[1]} in this batch` };
          minTrust = Math.min(minTrust, e.trustTier);
          facts.push({ kind: 'event', origin: e.origin ?? 'interaction', trustTier: e.trustTier, content: e.content });
          continue;
        }
        const event = cited.events.get(ref) ?? null;
        const eventRefusal = await citeRefusal(deps, tenant, ref, f, event && eventAsProcessed(event), citeContext(m));
        if (eventRefusal || !event) return eventRefusal ?? noSuchRecord(f);
        minTrust = Math.min(minTrust, event.trustTier);
        const origin = event.origin ?? 'interaction';
        facts.push({ kind: 'event', origin, trustTier: event.trustTier, content: event.content });
      }
      const parents = [...new Set(m.provenance.parentIds)].flatMap((id) => cited.parents.get(id) ?? []);
      for (const [j, ref] of m.provenance.parentIds.entries()) {
        const f = `${field}.provenance.parentIds.${j}`;
        const parent = parents.find((p) => p._id === ref);
        const parentRefusal = await citeRefusal(deps, tenant, ref, f, parent ?? null, citeContext(m));
        if (parentRefusal || !parent) return parentRefusal ?? noSuchRecord(f);
        minTrust = Math.min(minTrust, parent.trustTier);
        minConfidence = Math.min(minConfidence, parent.confidence);
        facts.push({ kind: 'memory', taint: parent.taint ?? [], trustTier: parent.trustTier });
      }
      // Trust is never amplified (invariant 7).
      if (m.trustTier > minTrust) {
        return {
          type: 'ValidationError',
          field: `${field}.trustTier`,
          message: `${field}.trustTier: exceeds the lowest trust tier of its inputs (${minTrust})`,
        };
      }
      if (m.confidence > confidenceCap(m, parents, minConfidence)) {
        return {
          type: 'ValidationError',
          field: `${field}.confidence`,
          message: `${field}.confidence: exceeds the lowest confidence of its inputs (${minConfidence})`,
        };
      }
      const claims = cited.claims.get(i);
      if (claims) {
        const flapping = flappingAnomaly(claims, contentHashOf(deps.tenantMacs, tenant, m.content), now);
        if (flapping) anomalies[i]!.push(flapping);
      }
      return null;
    },
  );
  const refusal = memoryRefusals.find((r) => r !== null);
  return refusal ? refused(refusal) : { refusal: null, inputs, anomalies };
}

/**
 * What a batch's memories cite (stored events and parent memories, by id) and the claims each memory with an
 * attribute is compared with for flapping (by batch index; none when the defences are off): each read once for the
 * whole batch, the lookups in parallel.
 */
async function citedByBatch(deps: AdmissionDeps, tenant: string, batch: StagedBatch) {
  const storedRefs = batch.memories.flatMap((m) => m.provenance.eventIds.filter((ref) => !BATCH_REF.test(ref)));
  const parentIds = batch.memories.flatMap((m) => m.provenance.parentIds);
  const queries =
    deps.claims && deps.defences !== false
      ? batch.memories.flatMap((m, i) =>
          m.attribute !== undefined ? [{ i, subjects: m.subjects, attribute: m.attribute }] : [],
        )
      : [];
  const [events, parents, claims] = await Promise.all([
    storedRefs.length > 0 ? deps.events.getMany(tenant, [...new Set(storedRefs)]) : [],
    parentIds.length > 0 ? deps.memories.getMany(tenant, [...new Set(parentIds)]) : [],
    queries.length > 0 && deps.claims ? deps.claims.bySubjectAttributes(tenant, queries) : [],
  ]);
  return {
    events: new Map(events.map((e) => [e._id, e])),
    parents: new Map(parents.map((p) => [p._id, p])),
    claims: new Map(claims.map((c, j) => [queries[j]!.i, c])),
  };
}

/**
 * The highest confidence a memory may claim: its inputs' lowest, or, when it says what its parents all say and they
 * agree from independent sources, the highest of theirs (never more than one of them had).
 */
function confidenceCap(m: MemoryInput, parents: readonly MemoryRecord[], minConfidence: number): number {
  const cited = parents.filter((p) => m.provenance.parentIds.includes(p._id));
  if (!independentAgreement(cited) || normalisedContent(cited[0]!.content) !== normalisedContent(m.content))
    return minConfidence;
  return Math.max(minConfidence, ...cited.map((p) => p.confidence));
}

/**
 * What a write is told when it cites a record the processing judge will not let it cite. Another principal's
 * record, a restricted or objecting subject's, or one under correction is refused exactly as one that does not
 * exist, so that neither its existence nor, through the derivation audit's verdict, its content can be probed by
 * citing it. An erased one says so only when a tombstone names it; a held one says it is held (the writer could
 * read it before the hold).
 */
async function citeRefusal(
  deps: AdmissionDeps,
  tenant: string,
  id: string,
  field: string,
  record: ProcessedRecord | null,
  ctx: ProcessingContext,
): Promise<Refusal | null> {
  if (!record) return refuseMissing(deps, tenant, id, field);
  const verdict = mayProcess('cite', record, ctx);
  if (verdict.allowed) return null;
  switch (verdict.rule) {
    case 'erased':
    case 'lifecycle':
    case 'quarantined':
      return refuseMissing(deps, tenant, id, field);
    case 'held':
      return refuseHeld(field);
    default:
      return noSuchRecord(field);
  }
}

/** A record kept under a legal hold is frozen: kept for the matter, never a source of new records. */
function refuseHeld(field: string): Refusal {
  return {
    type: 'LegalHold',
    field,
    message: `${field}: the cited record is under a legal hold; nothing may be derived from it`,
  };
}

async function refuseMissing(deps: AdmissionDeps, tenant: string, id: string, field: string): Promise<Refusal> {
  const tombstoned = await deps.tombstones.findTombstoned(tenant, [{ kind: 'record', parts: [id] }]);
  return tombstoned.length > 0
    ? {
        type: 'Tombstoned',
        field,
        tellsOfErasure: 'cited-record',
        message: `${field}: the cited record was erased; nothing may be derived from it`,
      }
    : noSuchRecord(field);
}
