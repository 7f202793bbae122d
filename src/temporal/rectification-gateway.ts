import type { Client } from '@temporalio/client';
import { startRequestWorkflow } from './start-request-workflow.js';
import type { AuditLog } from '../governance/audit/audit-log.port.js';
import type { Principal } from '../governance/auth/principal.js';
import { evaluatePolicy, type PolicyDocument } from '../governance/policy/evaluate.js';
import { isoDurationToMs } from '../governance/policy/iso-duration.js';
import { dueDateOf, type RectificationFiling, type RectificationRequest } from '../governance/rights/rectification.js';
import type { RectificationStore } from '../governance/rights/rectification-store.js';
import type { TenantMacs } from '../substrate/fingerprint.js';
import { sha256Hex } from '../substrate/fingerprint.js';
import type { MemoryStore } from '../substrate/memories/memory-store.js';
import type { ClaimLookup } from '../substrate/memories/claim-lookup.js';
import type { TombstoneSpec, TombstoneStore } from '../substrate/tombstones/tombstone-store.js';
import { DomainError, ErrorType } from '../shared/errors.js';
import { rectificationWorkflowId } from '../shared/workflow-ids.js';
import type { RectificationInput } from '../../workflows/rectification.definitions.js';

/** A request's id, from the client's request key keyed under the tenant's key: filing it again finds the same one. */
export function rectificationRequestId(macs: TenantMacs, tenant: string, requestKey: string): string {
  return `rec_${macs.of(tenant, 'rectification-request-key', requestKey).slice(0, 24)}`;
}

/** Statuses a correction can be filed against: the value served as current. */
const CORRECTABLE = new Set(['active', 'disputed']);

/**
 * Files rectification requests (idempotently): the record is marked contested at once, so from filing no context
 * read serves it as current, and one workflow per request waits for the reviewer.
 */
export function createRectificationGateway(deps: {
  rectifications: RectificationStore;
  memories: MemoryStore;
  claims: ClaimLookup;
  tombstones: Pick<TombstoneStore, 'findTombstoned'>;
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
      {
        type: 'rectificationRequest',
        taskQueue: deps.taskQueue,
        workflowId: rectificationWorkflowId(request.tenant, request._id),
        tenant: request.tenant,
        requestId: request._id,
        kind: 'rectification',
      },
      input,
    );
  }

  /** The one current record of a subject's attribute: none is a 404, several a 409 (name one by id). */
  async function currentRecordOf(tenant: string, filing: RectificationFiling): Promise<string> {
    const claims = await deps.claims.bySubjectAttribute(tenant, [filing.subjectId!], filing.attribute!);
    const current = claims.filter((c) => CORRECTABLE.has(c.status));
    if (current.length === 0)
      throw new DomainError(
        ErrorType.NotFound,
        'attribute: no current record of this subject and attribute',
        'attribute',
      );
    if (current.length > 1)
      throw new DomainError(
        ErrorType.Conflict,
        `attribute: ${current.length} current records of this subject and attribute; name one by memoryId`,
        'attribute',
      );
    return current[0]!.id;
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
        const specs = (record?.subjects ?? []).map((s): TombstoneSpec => ({
          kind: 'subject-content',
          parts: [s, sha256Hex(filing.content)],
        }));
        if ((await deps.tombstones.findTombstoned(principal.tenant, specs)).length > 0)
          throw new DomainError(
            ErrorType.Tombstoned,
            'content: this content was erased for this subject and may not be written again',
            'content',
          );
        if (!record || record.status === 'deleted' || record.status === 'purged')
          throw new DomainError(ErrorType.NotFound, `memoryId: no memory ${memoryId}`, 'memoryId');
        if (!CORRECTABLE.has(record.status))
          throw new DomainError(
            ErrorType.Conflict,
            `memoryId: memory ${memoryId} is ${record.status}; only a current record can be corrected`,
            'memoryId',
          );
      }
      const receivedAt = new Date();
      const dueAt = dueDateOf(receivedAt, 0);
      const { request, created } = existing
        ? { request: existing, created: false }
        : await deps.rectifications.create(
            {
              _id: id,
              tenant: principal.tenant,
              memoryId,
              contentHash: sha256Hex(filing.content),
              eraseInaccurate: filing.eraseInaccurate,
              requester: principal.id,
              requesterRoles: [...principal.roles],
              writers: [record!.writtenBy],
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
      if (
        !created &&
        ((filing.memoryId !== undefined && request.memoryId !== filing.memoryId) ||
          request.contentHash !== sha256Hex(filing.content) ||
          request.eraseInaccurate !== filing.eraseInaccurate)
      )
        // The same key names one filing: another record or correction under it is a mistake, not a retry.
        throw new DomainError(ErrorType.Conflict, 'requestKey: already used for another correction', 'requestKey');
      if (request.state === 'awaiting-review') {
        // Marked before the workflow starts, and again on a retry: from filing, the value is not served as current.
        await deps.memories.contest(principal.tenant, request.memoryId, request._id, true);
      }
      await deps.audit.append({
        tenant: principal.tenant,
        actor: request.requester,
        action: 'rectification.filed',
        outcome: 'ok',
        target: request._id,
        details: { memoryId: request.memoryId, eraseInaccurate: String(request.eraseInaccurate) },
        idempotencyKey: `rectification:${request._id}:filed`,
      });
      await start(request, record?.policy.sensitivity ?? 'internal');
      return { request, created };
    },
    get: (tenant: string, id: string) => deps.rectifications.get(tenant, id),
    list: (tenant: string, limit: number) => deps.rectifications.list(tenant, limit),
  };
}

export type RectificationGateway = ReturnType<typeof createRectificationGateway>;
