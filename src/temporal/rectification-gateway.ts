import type { Client } from '@temporalio/client';
import { startRequestWorkflow } from './start-request-workflow.js';
import type { AuditLog } from '../governance/audit/audit-log.port.js';
import type { Principal } from '../governance/auth/principal.js';
import { evaluatePolicy, type PolicyDocument } from '../governance/policy/evaluate.js';
import { isoDurationToMs } from '../governance/policy/iso-duration.js';
import {
  contestedBy,
  dueDateOf,
  MAX_CONTESTED_DERIVED,
  type RectificationFiling,
  type RectificationRequest,
} from '../governance/rights/rectification.js';
import { isEvent } from '../governance/erasure/locate.js';
import type { LineageStore } from '../substrate/lineage/lineage-store.js';
import { mapBounded } from '../substrate/mongo/collections.js';
import type { RectificationStore } from '../governance/rights/rectification-store.js';
import {
  correctionContext,
  correctionVerdict,
  findRectificationSiblings,
  MAX_RECTIFICATION_SIBLINGS,
} from '../governance/rights/rectification-siblings.js';
import { mayProcess } from '../governance/read/processing-judge.js';
import type { MemoryRecord } from '../substrate/model/records.js';
import type { TenantMacs } from '../substrate/fingerprint.js';
import { contentHashOf, storedContentForms, subjectContentParts } from '../substrate/content-hash.js';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import type { ClaimLookup } from '../substrate/memories/claim-lookup.js';
import type { TombstoneSpec, TombstoneStore } from '../substrate/tombstones/tombstone-store.js';
import { DomainError, ErrorType } from '../shared/errors.js';
import { rectificationWorkflowId } from '../shared/workflow-ids.js';
import type { RectificationInput } from './contracts/rectification.contract.js';
import { rectificationRequestWorkflow } from './contracts/rectification.contract.js';

/** A request's id, from the client's request key keyed under the tenant's key: filing it again finds the same one. */
export function rectificationRequestId(macs: TenantMacs, tenant: string, requestKey: string): string {
  return `rec_${macs.of(tenant, 'rectification-request-key', requestKey).slice(0, 24)}`;
}

/**
 * Files rectification requests (idempotently): the record, and every sibling that states the same value (see
 * `rectification-siblings.ts`), is marked contested at once, so from filing no context read serves the value as
 * current, and one workflow per request waits for the reviewer.
 */
export function createRectificationGateway(deps: {
  rectifications: RectificationStore;
  memories: MemoryStore;
  claims: ClaimLookup;
  tombstones: Pick<TombstoneStore, 'findTombstoned'>;
  lineage: Pick<LineageStore, 'closure'>;
  audit: AuditLog;
  client: Client;
  taskQueue: string;
  macs: TenantMacs;
  reviewSlaPolicy: PolicyDocument;
}) {
  async function start(request: RectificationRequest, sensitivity: string): Promise<void> {
    const reminder = evaluatePolicy(deps.reviewSlaPolicy, { stage: 'reminder', sensitivity }).outcome;
    const input: RectificationInput = {
      tenant: request.tenant,
      requestId: request._id,
      writers: request.writers,
      requester: request.requester,
      reminderMs: isoDurationToMs(reminder),
    };
    await startRequestWorkflow(
      deps.client,
      rectificationRequestWorkflow,
      {
        taskQueue: deps.taskQueue,
        workflowId: rectificationWorkflowId(request.tenant, request._id),
        tenant: request.tenant,
        requestId: request._id,
        kind: 'rectification',
      },
      input,
    );
  }

  /**
   * The current record of a subject's attribute: none is a 404, several that state different values a 409 (name one
   * by id). Several that state one value are copies: the earliest is named, and the correction reaches the others.
   */
  async function currentRecordOf(tenant: string, filing: RectificationFiling): Promise<string> {
    const claims = await deps.claims.bySubjectAttribute(tenant, [filing.subjectId!], filing.attribute!);
    const ctx = correctionContext(tenant, [filing.subjectId!], new Date());
    const current = claims
      .filter((c) => mayProcess('correct', { _id: c.id, tenant, status: c.status, subjects: c.subjects }, ctx).allowed)
      .sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime() || (a.id < b.id ? -1 : 1));
    if (current.length === 0)
      throw new DomainError(
        ErrorType.NotFound,
        'attribute: no current record of this subject and attribute',
        'attribute',
      );
    if (new Set(current.map((c) => c.contentHash)).size > 1)
      throw new DomainError(
        ErrorType.Conflict,
        `attribute: ${current.length} current records of this subject and attribute; name one by memoryId`,
        'attribute',
      );
    return current[0]!.id;
  }

  /** Refuses a record the processing judge does not let a correction touch, by the rule it breaks. */
  function requireCorrectable(memoryId: string, record: MemoryRecord | null): asserts record is MemoryRecord {
    const verdict = record ? correctionVerdict(record, new Date()) : ({ allowed: false, rule: 'erased' } as const);
    if (verdict.allowed) return;
    if (verdict.rule === 'tenant' || verdict.rule === 'erased')
      throw new DomainError(ErrorType.NotFound, `memoryId: no memory ${memoryId}`, 'memoryId');
    const why =
      verdict.rule === 'lifecycle'
        ? `is ${record!.status}; only a current record can be corrected`
        : verdict.rule === 'held'
          ? 'is under a legal hold; it can be corrected once the hold is released'
          : `cannot be corrected (${verdict.rule})`;
    throw new DomainError(ErrorType.Conflict, `memoryId: memory ${memoryId} ${why}`, 'memoryId');
  }

  /** The memories derived by lineage from these records, themselves excluded; refused past the bound by count. */
  async function derivedFrom(tenant: string, ids: string[]): Promise<string[]> {
    const own = new Set(ids);
    const { derived } = await deps.lineage.closure(tenant, ids);
    const memories = derived.filter((id) => !own.has(id) && !isEvent(id)).sort();
    if (memories.length > MAX_CONTESTED_DERIVED)
      throw new DomainError(
        ErrorType.Conflict,
        `memoryId: ${memories.length} records derive from the value of this memory; one correction contests at most ${MAX_CONTESTED_DERIVED}`,
        'memoryId',
      );
    return memories;
  }

  /** The named record's siblings to contest with it: refused past the bound, by their count only. */
  async function siblingsOf(memoryId: string, record: MemoryRecord): Promise<MemoryRecord[]> {
    const found = await findRectificationSiblings(deps, record, new Date());
    if (found.kind === 'too-many')
      throw new DomainError(
        ErrorType.Conflict,
        `memoryId: ${found.count} other current records state the value of memory ${memoryId}; one correction reaches at most ${MAX_RECTIFICATION_SIBLINGS}`,
        'memoryId',
      );
    return found.siblings;
  }

  return {
    /** The same request key returns the same request; the key reused for another record or content is a 409. */
    async file(
      principal: Principal,
      filing: RectificationFiling,
    ): Promise<{ request: RectificationRequest; created: boolean }> {
      const id = rectificationRequestId(deps.macs, principal.tenant, filing.requestKey);
      const existing = await deps.rectifications.get(principal.tenant, id);
      const memoryId = existing?.memoryId ?? filing.memoryId ?? (await currentRecordOf(principal.tenant, filing));
      const record = await deps.memories.get(principal.tenant, memoryId);
      if (!existing) {
        // A correction may not write back what an erasure of this subject forbade (it checks as admission does).
        const specs = subjectContentParts(deps.macs, principal.tenant, record?.subjects ?? [], filing.content).map(
          (parts): TombstoneSpec => ({ kind: 'subject-content', parts }),
        );
        if ((await deps.tombstones.findTombstoned(principal.tenant, specs)).length > 0)
          throw new DomainError(
            ErrorType.Tombstoned,
            'content: this content was erased for this subject and may not be written again',
            'content',
          );
        requireCorrectable(memoryId, record);
      }
      const siblings = existing ? [] : await siblingsOf(memoryId, record!);
      const contestedDerived = existing
        ? []
        : await derivedFrom(principal.tenant, [memoryId, ...siblings.map((s) => s._id)]);
      const receivedAt = new Date();
      const dueAt = dueDateOf(receivedAt, 0);
      const { request, created } = existing
        ? { request: existing, created: false }
        : await deps.rectifications.create(
            {
              _id: id,
              tenant: principal.tenant,
              memoryId,
              siblings: siblings.map((s) => s._id),
              contestedDerived,
              contentHash: contentHashOf(deps.macs, principal.tenant, filing.content),
              hashKeyId: deps.macs.keyId,
              eraseInaccurate: filing.eraseInaccurate,
              requester: principal.id,
              requesterRoles: [...principal.roles],
              writers: [...new Set([record!.writtenBy, ...siblings.map((s) => s.writtenBy)])],
              receivedAt,
              dueAt,
              extensionMonths: 0,
              extensionReasonHash: null,
              state: 'awaiting-review',
              decidedBy: null,
              decidedAt: null,
              reasonHash: null,
              correctedId: null,
              derived: { stale: [], erased: [] },
              erasureRequestId: null,
              updatedAt: receivedAt,
            },
            filing.content,
          );
      if (!created && request.state === 'void')
        throw new DomainError(
          ErrorType.Conflict,
          'requestKey: names a correction voided when an erasure reached its record; file again under a new key',
          'requestKey',
        );
      if (
        !created &&
        ((filing.memoryId !== undefined && request.memoryId !== filing.memoryId) ||
          !storedContentForms(deps.macs, principal.tenant, filing.content).includes(request.contentHash) ||
          request.eraseInaccurate !== filing.eraseInaccurate)
      )
        // The same key names one filing: another record or correction under it is a mistake, not a retry.
        throw new DomainError(ErrorType.Conflict, 'requestKey: already used for another correction', 'requestKey');
      if (request.state === 'awaiting-review') {
        // Marked before the workflow starts, and again on a retry: from filing, the value is not served as current,
        // nor any view that repeats it.
        await mapBounded(contestedBy(request), 8, (id) =>
          deps.memories.contest(principal.tenant, id, request._id, true),
        );
      }
      await deps.audit.append({
        tenant: principal.tenant,
        actor: request.requester,
        action: 'rectification.filed',
        outcome: 'ok',
        target: request._id,
        details: {
          memoryId: request.memoryId,
          siblings: String(request.siblings?.length ?? 0),
          contestedDerived: String(request.contestedDerived?.length ?? 0),
          eraseInaccurate: String(request.eraseInaccurate),
        },
        idempotencyKey: `rectification:${request._id}:filed`,
      });
      await start(request, record?.policy.sensitivity ?? 'internal');
      return { request, created };
    },
    get: (tenant: string, id: string) => deps.rectifications.get(tenant, id),
    list: (tenant: string, limit: number) => deps.rectifications.list(tenant, limit),
    forMemories: (tenant: string, memoryIds: readonly string[]) => deps.rectifications.forMemories(tenant, memoryIds),
  };
}

export type RectificationGateway = ReturnType<typeof createRectificationGateway>;
