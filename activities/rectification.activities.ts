import { ApplicationFailure } from '@temporalio/activity';
import type { AuditLog } from '../src/governance/audit/audit-log.port.js';
import type { ErasureFenceStore, FenceKey } from '../src/governance/erasure/erasure-fence-store.js';
import type { ErasureRequestStore } from '../src/governance/erasure/erasure-request-store.js';
import { erasureRequestId, newErasureRequest } from '../src/governance/erasure/erasure-filing.js';
import type { Notifier } from '../src/governance/notifications/notifier.js';
import { evaluatePolicy, type PolicyDocument } from '../src/governance/policy/evaluate.js';
import {
  correctedRecordId,
  type RectificationDecision,
  type RectificationRequest,
} from '../src/governance/rights/rectification.js';
import type { RectificationStore } from '../src/governance/rights/rectification-store.js';
import { issueReceipt } from '../src/governance/rights/receipt.js';
import type { ReceiptStore } from '../src/governance/rights/receipt-store.js';
import type { CertificateSigner } from '../src/governance/certificates/signing.js';
import type { Role } from '../src/governance/auth/principal.js';
import { canonicalJson } from '../src/shared/canonical-json.js';
import { ErrorType } from '../src/shared/errors.js';
import type { Fingerprinter, TenantMacs } from '../src/substrate/fingerprint.js';
import { sha256Hex } from '../src/substrate/fingerprint.js';
import type { LineageStore } from '../src/substrate/lineage/lineage-store.js';
import type { MemoryStore } from '../src/substrate/memories/memory-store.js';
import type { MemoryRecord } from '../src/substrate/model/records.js';
import { indexUnlessErased } from '../src/substrate/search/index-unless-erased.js';
import type { SearchIndex } from '../src/substrate/search/search-index.port.js';

/** What the erasure workflow is started with (its input, as the erasure gateway gives it). */
export interface CorrectionErasureStart {
  tenant: string;
  requestId: string;
  receivedAt: string;
}

export interface RectificationActivityDeps {
  rectifications: RectificationStore;
  receipts: ReceiptStore;
  signer: CertificateSigner;
  memories: MemoryStore;
  lineage: LineageStore;
  index: SearchIndex;
  fences: ErasureFenceStore;
  erasureRequests: ErasureRequestStore;
  audit: AuditLog;
  notifier: Notifier;
  derivedPolicy: PolicyDocument;
  fingerprints: Fingerprinter;
  macs: TenantMacs;
  reviewersEmail: string;
  dpoEmail: string;
  now?: () => Date;
}

/** What a decision did: ids and counts only (this goes into the workflow's history). */
export interface RectificationOutcome {
  state: 'applied' | 'rejected' | 'void';
  correctedId: string | null;
  stale: number;
  /** Records the erasure of the inaccurate value is to reach (empty: nothing to erase). */
  toErase: string[];
}

const LIVE = new Set(['active', 'disputed']);

/** The decision loses to a running erasure of the record, its subjects or what it was derived from. */
function fencedOut(requestId: string, erasureId: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorType.Conflict,
    message: `rectification ${requestId}: erasure request ${erasureId} is in progress for its record; no decision was made`,
    details: ['id'],
    nonRetryable: true,
  });
}

/**
 * Activities of a rectification: apply a reviewer's decision, file the erasure of the inaccurate value, send
 * notices. Every write is idempotent by the request's id: the corrected record's id is derived from it, audit
 * entries are keyed by it, and a retry that finds the request decided reports what was decided.
 */
export function createRectificationActivities(deps: RectificationActivityDeps) {
  const now = deps.now ?? (() => new Date());

  function fenceKeys(old: MemoryRecord, correctedId: string, content: string): FenceKey[] {
    return [
      { kind: 'record', value: old._id },
      { kind: 'record', value: correctedId },
      { kind: 'content', value: sha256Hex(content) },
      ...old.subjects.map((value) => ({ kind: 'subject' as const, value })),
      ...[...old.provenance.eventIds, ...old.provenance.parentIds].map((value) => ({ kind: 'record' as const, value })),
    ];
  }

  /** The corrected value as a record of its own: the old one's governance, inputs and owner, valid from now. */
  function correctedRecord(request: RectificationRequest, old: MemoryRecord, content: string, at: Date): MemoryRecord {
    const { contestedBy: _contested, stale: _stale, qualifierDrift: _drift, derivation: _audit, ...governance } = old;
    return {
      ...governance,
      _id: correctedRecordId(request._id),
      content,
      contentHash: sha256Hex(content),
      validFrom: at,
      validTo: null,
      recordedAt: at,
      provenance: {
        eventIds: old.provenance.eventIds,
        parentIds: old.provenance.parentIds,
        derivationRule: 'rectification',
        modelVersion: null,
        promptVersion: null,
      },
      version: 1,
      status: 'active',
      writtenBy: request.requester,
      statusReason: `rectification:${request._id}`,
      updatedAt: at,
    };
  }

  async function close(request: RectificationRequest, to: 'rejected' | 'void', patch = {}) {
    await deps.rectifications.close(request.tenant, request._id, to, patch);
    await deps.rectifications.forgetContent(request.tenant, request._id);
    await deps.memories.contest(request.tenant, request.memoryId, request._id, false);
    await indexUnlessErased(deps.index, deps.memories, request.tenant, [request.memoryId]);
  }

  const rejected: RectificationOutcome = { state: 'rejected', correctedId: null, stale: 0, toErase: [] };

  async function applied(request: RectificationRequest): Promise<RectificationOutcome> {
    return {
      state: 'applied',
      correctedId: request.correctedId,
      stale: request.derived.stale.length,
      toErase: request.eraseInaccurate ? [request.memoryId, ...request.derived.erased] : request.derived.erased,
    };
  }

  async function approve(request: RectificationRequest, reviewer: string, reasonHash: string) {
    const { tenant } = request;
    const at = now();
    const old = await deps.memories.get(tenant, request.memoryId);
    const content = await deps.rectifications.contentOf(tenant, request._id);
    if (!old || !LIVE.has(old.status) || content === null) {
      await close(request, 'void', { decidedBy: reviewer, decidedAt: at, reasonHash });
      return { state: 'void' as const, correctedId: null, stale: 0, toErase: [] };
    }
    const corrected = correctedRecord(request, old, content, at);
    const keys = fenceKeys(old, corrected._id, content);
    const lease = `rectification:${request._id}`;
    await deps.fences.admissions.open(tenant, lease);
    try {
      const before = await deps.fences.firstFenced(tenant, keys);
      if (before) throw fencedOut(request._id, before.requestId);
      await deps.lineage.register(tenant, corrected._id, [...old.provenance.eventIds, ...old.provenance.parentIds]);
      await deps.memories.insert(corrected);
      // Checked again after writing, as admission does: an erasure raises its fence before it locates, so the
      // record either landed before the fence (and its locate sees it) or is taken back here.
      const after = await deps.fences.firstFenced(tenant, keys);
      const standing = await deps.fences.admissions.standing(tenant, lease);
      if (after || standing.state !== 'open') {
        await deps.memories.purge(tenant, [corrected._id]);
        await deps.index.purge(tenant, [corrected._id]);
        throw fencedOut(request._id, after?.requestId ?? (standing.state === 'revoked' ? standing.requestId : '?'));
      }
    } finally {
      await deps.fences.admissions.close(tenant, lease);
    }
    // The inaccurate value stops being current: superseded, its valid time closed where the correction starts.
    const cause = `rectified-by:${corrected._id}`;
    const fresh = await deps.memories.get(tenant, old._id);
    if (fresh && LIVE.has(fresh.status)) {
      await deps.memories.transition(tenant, old._id, fresh.status, 'superseded', cause, { validTo: at });
    }
    await deps.memories.contest(tenant, old._id, request._id, false);
    await indexUnlessErased(deps.index, deps.memories, tenant, [corrected._id, old._id]);

    // What was derived from the inaccurate value: flagged stale, or erased, as the policy says per record.
    const { derived } = await deps.lineage.closure(tenant, [old._id]);
    const views = await deps.memories.getMany(tenant, derived);
    const erase: string[] = [];
    const stale: string[] = [];
    for (const view of views) {
      const decision = evaluatePolicy(deps.derivedPolicy, { sensitivity: view.policy.sensitivity });
      (decision.outcome === 'erase' ? erase : stale).push(view._id);
    }
    await deps.memories.flagStale(tenant, stale, { because: `rectification:${request._id}`, since: at });
    const patch = {
      decidedBy: reviewer,
      decidedAt: at,
      reasonHash,
      correctedId: corrected._id,
      derived: { stale, erased: erase },
    };
    if (!(await deps.rectifications.close(tenant, request._id, 'applied', patch))) {
      // Another attempt of this decision closed it first (the record it wrote has this same id): report that one.
      const landed = await deps.rectifications.get(tenant, request._id);
      if (landed?.state === 'applied') {
        await recordDecision(landed);
        return applied(landed);
      }
    }
    await deps.rectifications.forgetContent(tenant, request._id);
    const closed = { ...request, ...patch, state: 'applied' as const };
    await recordDecision(closed);
    return applied(closed);
  }

  /**
   * The decision's audit entry and the request's signed receipt anchored at it, from the stored request: a retry
   * finds both written under the same keys and writes neither again.
   */
  async function recordDecision(request: RectificationRequest): Promise<void> {
    const approved = request.state === 'applied';
    const entry = await deps.audit.append({
      tenant: request.tenant,
      actor: request.decidedBy ?? 'lethe:rectification',
      action: approved ? 'rectification.applied' : 'rectification.rejected',
      target: request._id,
      outcome: 'ok',
      details: {
        memoryId: request.memoryId,
        ...(approved
          ? {
              correctedId: request.correctedId,
              stale: String(request.derived.stale.length),
              erase: String(request.derived.erased.length + (request.eraseInaccurate ? 1 : 0)),
            }
          : {}),
        reasonHash: request.reasonHash,
      },
      idempotencyKey: `rectification:${request._id}:${approved ? 'applied' : 'rejected'}`,
    });
    await deps.receipts.put(
      issueReceipt(
        {
          tenant: request.tenant,
          right: 'rectification',
          requestId: request._id,
          state: request.state,
          requester: request.requester,
          receivedAt: request.receivedAt.toISOString(),
          dueAt: request.dueAt.toISOString(),
          closedAt: (request.decidedAt ?? now()).toISOString(),
          outcome: {
            memoryId: request.memoryId,
            correctedId: request.correctedId,
            decidedBy: request.decidedBy,
            derivedStale: request.derived.stale.length,
            derivedErased: request.derived.erased.length,
            eraseInaccurate: request.eraseInaccurate ? 1 : 0,
          },
        },
        entry,
        deps.signer,
      ),
    );
  }

  return {
    async decideRectification(input: {
      tenant: string;
      requestId: string;
      reviewer: string;
      decision: RectificationDecision;
      reasonHash: string;
    }): Promise<RectificationOutcome> {
      const request = await deps.rectifications.get(input.tenant, input.requestId);
      if (!request)
        throw ApplicationFailure.nonRetryable(`rectification ${input.requestId} not found`, ErrorType.NotFound);
      // A retry after the decision landed reports it (and writes its entry and receipt if a crash left them out).
      if (request.state === 'applied' || request.state === 'rejected') {
        await recordDecision(request);
        return request.state === 'applied' ? applied(request) : rejected;
      }
      if (request.state !== 'awaiting-review')
        return { state: request.state, correctedId: null, stale: 0, toErase: [] };
      if (input.decision === 'approve') return approve(request, input.reviewer, input.reasonHash);
      const patch = { decidedBy: input.reviewer, decidedAt: now(), reasonHash: input.reasonHash };
      await close(request, 'rejected', patch);
      const landed = await deps.rectifications.get(input.tenant, request._id);
      if (landed?.state === 'rejected') await recordDecision(landed);
      return landed?.state === 'applied' ? applied(landed) : rejected;
    },

    /**
     * Files the erasure of the inaccurate value (and of the derived records the policy erases) in the DPO's name,
     * on the `correction` ground, keyed by the rectification: a retry files the same request. Its workflow is
     * started by the caller.
     */
    async fileCorrectionErasure(input: {
      tenant: string;
      requestId: string;
      memoryIds: string[];
    }): Promise<CorrectionErasureStart> {
      const request = await deps.rectifications.get(input.tenant, input.requestId);
      if (!request)
        throw ApplicationFailure.nonRetryable(`rectification ${input.requestId} not found`, ErrorType.NotFound);
      const filing = {
        selector: { memoryIds: input.memoryIds },
        legalGround: 'correction' as const,
        requestKey: `rectification:${request._id}`,
      };
      const selectorHash = deps.fingerprints.of('erasure-selector', input.tenant, canonicalJson(filing.selector));
      const id = erasureRequestId(deps.macs, input.tenant, filing, selectorHash, 1);
      const principal = { tenant: input.tenant, id: request.requester, roles: request.requesterRoles as Role[] };
      const { request: filed } = await deps.erasureRequests.create(
        newErasureRequest({ id, principal, receivedAt: now() }, filing, selectorHash),
      );
      await deps.rectifications.update(input.tenant, request._id, { erasureRequestId: filed._id });
      await deps.audit.append({
        tenant: input.tenant,
        actor: request.requester,
        action: 'rectification.erasure-filed',
        target: request._id,
        outcome: 'ok',
        details: { erasureRequestId: filed._id, records: String(input.memoryIds.length) },
        idempotencyKey: `rectification:${request._id}:erasure`,
      });
      return { tenant: input.tenant, requestId: filed._id, receivedAt: filed.receivedAt.toISOString() };
    },

    async sendRectificationNotice(input: {
      tenant: string;
      requestId: string;
      kind: 'opened' | 'reminder' | 'decided';
      state?: string;
    }): Promise<void> {
      const text = {
        opened: `Rectification ${input.requestId} (tenant ${input.tenant}) waits for a reviewer's decision.`,
        reminder: `Rectification ${input.requestId} (tenant ${input.tenant}) is still waiting for a reviewer.`,
        decided: `Rectification ${input.requestId} (tenant ${input.tenant}) was decided: ${input.state ?? 'unknown'}.`,
      }[input.kind];
      await deps.notifier.send({
        to: input.kind === 'decided' ? deps.dpoEmail : deps.reviewersEmail,
        subject: `Lethe: rectification ${input.kind} for ${input.requestId}`,
        text,
      });
    },
  };
}
