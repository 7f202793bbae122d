import { ApplicationFailure } from '@temporalio/activity';
import type { AuditLog } from '../src/governance/audit/audit-log.port.js';
import type { ErasureFenceStore, FenceKey } from '../src/governance/erasure/erasure-fence-store.js';
import type { ErasureRequestStore } from '../src/governance/erasure/erasure-request-store.js';
import { erasureRequestId, newErasureRequest } from '../src/governance/erasure/erasure-filing.js';
import type { Notifier } from '../src/governance/notifications/notifier.js';
import { evaluatePolicy, type PolicyDocument } from '../src/governance/policy/evaluate.js';
import {
  correctedCopyId,
  correctedRecordId,
  type RectificationDecision,
  type RectificationRequest,
  contestedBy,
} from '../src/governance/rights/rectification.js';
import {
  correctionVerdict,
  findRectificationSiblings,
  MAX_RECTIFICATION_SIBLINGS,
  siblingsAmong,
  statesSameValue,
} from '../src/governance/rights/rectification-siblings.js';
import type { RectificationStore } from '../src/governance/rights/rectification-store.js';
import { issueReceipt } from '../src/governance/rights/receipt.js';
import type { ReceiptStore } from '../src/governance/rights/receipt-store.js';
import type { CertificateSigner } from '../src/governance/certificates/signing.js';
import type { Role } from '../src/governance/auth/principal.js';
import { canonicalJson } from '../src/shared/canonical-json.js';
import { ErrorType } from '../src/shared/errors.js';
import type { Fingerprinter, TenantMacs } from '../src/substrate/fingerprint.js';
import { sha256Hex } from '../src/shared/sha256.js';
import { contentHashOf } from '../src/substrate/content-hash.js';
import type { EventStore } from '../src/substrate/events/event-store.js';
import type { LineageStore } from '../src/substrate/lineage/lineage-store.js';
import type { ClaimLookup } from '../src/substrate/memories/claim-lookup.js';
import type { MemoryStore } from '../src/substrate/memories/memory-store.js';
import { mapBounded } from '../src/substrate/mongo/collections.js';
import type { MemoryRecord } from '../src/substrate/model/records.js';
import { indexUnlessErased } from '../src/substrate/search/index-unless-erased.js';
import type { SearchIndex } from '../src/substrate/search/search-index.port.js';
import type { RectificationOutcome } from '../src/temporal/contracts/rectification.contract.js';

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
  /** Finds the records that state the corrected value too (its siblings). */
  claims: Pick<ClaimLookup, 'bySubjectAttribute'>;
  /** Marks the events the inaccurate value was derived from. */
  events: Pick<EventStore, 'markCorrected'>;
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

const LIVE = new Set(['active', 'disputed']);

/** Copies corrected at once: each is a few round trips to the store. */
const COPY_CONCURRENCY = 8;

/** No decision was made, and the request stays open: why, in ids only. */
function noDecision(requestId: string, why: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorType.Conflict,
    message: `rectification ${requestId}: ${why}; no decision was made`,
    details: ['id'],
    nonRetryable: true,
  });
}

/** The decision waits for a legal hold placed on the record since filing. */
const heldOut = (requestId: string) => noDecision(requestId, 'its record is under a legal hold');

/** The decision loses to a running erasure of the record, its subjects or what it was derived from. */
const fencedOut = (requestId: string, erasureId: string) =>
  noDecision(requestId, `erasure request ${erasureId} is in progress for its record`);

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

  /** The id of the corrected record in place of one copy of the inaccurate value (the named one, or a sibling). */
  const correctedIdOf = (request: RectificationRequest, copyId: string) =>
    copyId === request.memoryId ? correctedRecordId(request._id) : correctedCopyId(request._id, copyId);
  /** An earlier attempt of this decision superseded the copy with its correction (and crashed before closing). */
  const supersededByThis = (request: RectificationRequest, copy: MemoryRecord) =>
    copy.status === 'superseded' && copy.statusReason === `rectified-by:${correctedIdOf(request, copy._id)}`;

  /**
   * The corrected value as a record of its own in place of one copy: that copy's governance, scope, inputs and
   * owner, valid from now. Each copy gets its own, so that every principal who held the wrong value holds the
   * corrected one in the same scope, and each correction's lineage is its own copy's (an erasure of that copy's
   * sources reaches its correction).
   */
  function correctedRecord(request: RectificationRequest, old: MemoryRecord, content: string, at: Date): MemoryRecord {
    const { contestedBy: _contested, stale: _stale, qualifierDrift: _drift, derivation: _audit, ...governance } = old;
    return {
      ...governance,
      _id: correctedIdOf(request, old._id),
      content,
      contentHash: contentHashOf(deps.macs, old.tenant, content),
      hashKeyId: deps.macs.keyId,
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

  /** Takes the request's contest mark off these records (idempotent) and indexes them as they now stand. */
  async function release(request: RectificationRequest, ids: readonly string[]) {
    const unique = [...new Set(ids)];
    await mapBounded(unique, COPY_CONCURRENCY, (id) => deps.memories.contest(request.tenant, id, request._id, false));
    await indexUnlessErased(deps.index, deps.memories, request.tenant, unique);
  }

  async function close(request: RectificationRequest, to: 'rejected' | 'void', patch = {}) {
    await deps.rectifications.close(request.tenant, request._id, to, patch);
    await deps.rectifications.forgetContent(request.tenant, request._id);
    await release(request, contestedBy(request));
  }

  const rejected: RectificationOutcome = { state: 'rejected', correctedId: null, siblings: 0, stale: 0, toErase: [] };

  async function applied(request: RectificationRequest): Promise<RectificationOutcome> {
    const siblings = request.siblings ?? [];
    return {
      state: 'applied',
      correctedId: request.correctedId,
      siblings: siblings.length,
      stale: request.derived.stale.length,
      toErase: request.eraseInaccurate
        ? [request.memoryId, ...siblings, ...request.derived.erased]
        : request.derived.erased,
    };
  }

  /**
   * The siblings the decision corrects with the named record: those filed with it that still state its value and
   * may be corrected (or that an earlier attempt of this decision already superseded), then any copy written since
   * filing, up to the bound. `left`: copies counted but not reached (past the bound, or no longer correctable).
   */
  async function siblingsToCorrect(request: RectificationRequest, old: MemoryRecord, at: Date) {
    const filed = request.siblings ?? [];
    const stored = (await deps.memories.getMany(request.tenant, filed)).filter((s) => statesSameValue(old, s));
    const done = stored.filter((s) => supersededByThis(request, s));
    const still = siblingsAmong(
      old,
      stored.filter((s) => !done.includes(s)),
      at,
    ).siblings;
    const found = await findRectificationSiblings(deps, old, at);
    const byId = new Map([...done, ...still].map((s) => [s._id, s]));
    for (const s of found.kind === 'found' ? found.siblings : []) byId.set(s._id, s);
    const siblings = [...byId.values()].slice(0, MAX_RECTIFICATION_SIBLINGS);
    const left =
      filed.filter((id) => !byId.has(id)).length +
      (found.kind === 'too-many' ? found.count : 0) +
      Math.max(0, byId.size - MAX_RECTIFICATION_SIBLINGS);
    return { siblings, left };
  }

  async function approve(request: RectificationRequest, reviewer: string, reasonHash: string) {
    const { tenant } = request;
    const at = now();
    const old = await deps.memories.get(tenant, request.memoryId);
    const content = await deps.rectifications.contentOf(tenant, request._id);
    const verdict = old && !supersededByThis(request, old) ? correctionVerdict(old, at) : ({ allowed: true } as const);
    if (!verdict.allowed && verdict.rule === 'held') throw heldOut(request._id);
    if (!old || !verdict.allowed || content === null) {
      await close(request, 'void', { decidedBy: reviewer, decidedAt: at, reasonHash });
      return { state: 'void' as const, correctedId: null, siblings: 0, stale: 0, toErase: [] };
    }
    const { siblings, left } = await siblingsToCorrect(request, old, at);
    const copies = [old, ...siblings];
    const pairs = copies.map((copy) => ({ copy, corrected: correctedRecord(request, copy, content, at) }));
    const correctedIds = pairs.map((p) => p.corrected._id);
    const keys = pairs.flatMap(({ copy, corrected }) => fenceKeys(copy, corrected._id, content));
    const lease = `rectification:${request._id}`;
    await deps.fences.admissions.open(tenant, lease);
    try {
      const before = await deps.fences.firstFenced(tenant, keys);
      if (before) throw fencedOut(request._id, before.requestId);
      await mapBounded(pairs, COPY_CONCURRENCY, async ({ copy, corrected }) => {
        await deps.lineage.register(tenant, corrected._id, [...copy.provenance.eventIds, ...copy.provenance.parentIds]);
        await deps.memories.insert(corrected);
      });
      // Checked again after writing, as admission does: an erasure raises its fence before it locates, so the
      // records either landed before the fence (and its locate sees them) or are taken back here.
      const after = await deps.fences.firstFenced(tenant, keys);
      const standing = await deps.fences.admissions.standing(tenant, lease);
      if (after || standing.state !== 'open') {
        await deps.memories.withdraw(tenant, correctedIds);
        await deps.index.purge(tenant, correctedIds);
        throw fencedOut(request._id, after?.requestId ?? (standing.state === 'revoked' ? standing.requestId : '?'));
      }
    } finally {
      await deps.fences.admissions.close(tenant, lease);
    }
    // The inaccurate value stops being current in every copy: superseded by that copy's correction, its valid time
    // closed where the correction starts.
    await mapBounded(pairs, COPY_CONCURRENCY, async ({ copy, corrected }) => {
      const fresh = await deps.memories.get(tenant, copy._id);
      if (fresh && LIVE.has(fresh.status))
        await deps.memories.transition(tenant, copy._id, fresh.status, 'superseded', `rectified-by:${corrected._id}`, {
          validTo: at,
        });
    });
    await release(request, [...copies.map((c) => c._id), ...(request.siblings ?? [])]);
    await indexUnlessErased(deps.index, deps.memories, tenant, correctedIds);
    // The events the inaccurate value was derived from stay what was said, marked: no longer evidence for it.
    await deps.events.markCorrected(
      tenant,
      [...new Set(copies.flatMap((c) => [...c.provenance.eventIds, ...(c.provenance.repairedEventIds ?? [])]))],
      request._id,
    );

    // What was derived from the inaccurate value: flagged stale, or erased, as the policy says per record. The copies
    // and their corrections are not among them (a copy may itself be derived from another).
    const corrections = new Set([...copies.map((c) => c._id), ...correctedIds]);
    const { derived } = await deps.lineage.closure(
      tenant,
      copies.map((c) => c._id),
    );
    const views = await deps.memories.getMany(
      tenant,
      derived.filter((id) => !corrections.has(id)),
    );
    const erase: string[] = [];
    const stale: string[] = [];
    for (const view of views) {
      const decision = evaluatePolicy(deps.derivedPolicy, { sensitivity: view.policy.sensitivity });
      (decision.outcome === 'erase' ? erase : stale).push(view._id);
    }
    await deps.memories.flagStale(tenant, stale, { because: `rectification:${request._id}`, since: at });
    // What derives from the value was contested from filing: flagged stale now, it leaves the contest; what goes to
    // the erasure stays contested (not served as current) until the erasure reaches it.
    const toErase = new Set(erase);
    await release(
      request,
      (request.contestedDerived ?? []).filter((id) => !toErase.has(id)),
    );
    const patch = {
      decidedBy: reviewer,
      decidedAt: at,
      reasonHash,
      correctedId: correctedIds[0]!,
      siblings: siblings.map((s) => s._id),
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
    await recordDecision(closed, left);
    return applied(closed);
  }

  /**
   * The decision's audit entry and the request's signed receipt anchored at it, from the stored request: a retry
   * finds both written under the same keys and writes neither again.
   */
  async function recordDecision(request: RectificationRequest, siblingsLeft = 0): Promise<void> {
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
              siblings: String(request.siblings?.length ?? 0),
              ...(siblingsLeft > 0 ? { siblingsLeft: String(siblingsLeft) } : {}),
              stale: String(request.derived.stale.length),
              erase: String(
                request.derived.erased.length + (request.eraseInaccurate ? 1 + (request.siblings?.length ?? 0) : 0),
              ),
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
            siblings: request.siblings?.length ?? 0,
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
        return { state: request.state, correctedId: null, siblings: 0, stale: 0, toErase: [] };
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
