import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import type { MemoryStore } from '../../substrate/memories/memory-store.js';
import type { MemoryRecord } from '../../substrate/model/records.js';
import type { Role } from '../../governance/auth/principal.js';
import type { ReviewStore } from '../../governance/review/review-store.js';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { parseOrThrow } from '../../shared/validation.js';
import { DomainError, ErrorType, validationError } from '../../shared/errors.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { disputeWorkflowId, reviewWorkflowId } from '../../shared/workflow-ids.js';
import type { DisputeStore } from '../../governance/disputes/dispute-store.js';
import { ADJUDICATIONS } from '../../governance/disputes/contradiction.js';

const DecisionSchema = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  reason: z.string().min(1).max(2000),
});

const ResolutionSchema = z
  .strictObject({
    outcome: z.enum(ADJUDICATIONS),
    /** The record kept (keep-one) or rejected (reject-one). */
    memoryId: z.string().min(1).max(256).optional(),
    reason: z.string().min(1).max(2000),
  })
  .superRefine((r, ctx) => {
    if (r.outcome === 'keep-both' && r.memoryId !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['memoryId'], message: 'not used with keep-both' });
    }
    if (r.outcome !== 'keep-both' && r.memoryId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['memoryId'], message: `required with ${r.outcome}` });
    }
  });

const QueueQuerySchema = z.strictObject({
  type: z.enum(['sign-off', 'dispute']).optional(),
  namespace: z.string().min(1).max(128).optional(),
  kind: z.string().min(1).max(32).optional(),
  olderThanHours: z.coerce.number().min(0).max(24 * 365).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** What a reviewer decides on: evidence ids, the writer, and — to a reviewer only (an admin sees the queue, not
 * what is in it) — the content. */
function evidenceOf(m: MemoryRecord, roles: readonly Role[]) {
  return {
    evidence: { eventIds: m.provenance.eventIds, parentIds: m.provenance.parentIds, derivationRule: m.provenance.derivationRule },
    writtenBy: m.writtenBy,
    ...(roles.includes('reviewer') ? { content: m.content } : {}),
  };
}

/** The reviewer's queue of high-impact writes waiting for sign-off, and the decision on one. */
export function registerReviewRoutes(
  app: FastifyInstance,
  deps: { memories: MemoryStore; reviews: ReviewStore; disputes: DisputeStore; client: Client; fingerprints: Fingerprinter },
): void {
  app.get(
    '/v1/tenants/:tenant/review-queue',
    {
      config: { action: 'review.read' },
      schema: {
        summary: 'Pending sign-offs and open disputes (filters: type, namespace, kind, age)',
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const tenant = principalOf(request).tenant;
      const q = parseOrThrow(QueueQuerySchema, request.query);
      const cutoff = q.olderThanHours !== undefined ? Date.now() - q.olderThanHours * 3_600_000 : Infinity;
      const pending = q.type === 'dispute' ? [] : await deps.memories.listByStatus(tenant, 'candidate', q.limit);
      const signOffs = pending
        .filter((m) => (!q.namespace || m.namespace === q.namespace) && (!q.kind || m.kind === q.kind) && m.recordedAt.getTime() <= cutoff)
        .map((m) => ({ type: 'sign-off' as const, id: m._id, kind: m.kind, namespace: m.namespace, recordedAt: m.recordedAt.toISOString(), reason: m.statusReason, writtenBy: m.writtenBy }));
      const open = q.type === 'sign-off' ? [] : await deps.disputes.listOpen(tenant, q.limit);
      const disputes = open
        .filter((d) => (!q.namespace || d.namespace === q.namespace) && d.openedAt.getTime() <= cutoff)
        .map((d) => ({ type: 'dispute' as const, id: d._id, namespace: d.namespace, memoryIds: d.memoryIds, recordedAt: d.openedAt.toISOString(), writtenBy: d.writers.join(',') }));
      // A kind filter names memory kinds: disputes are listed only when none is given.
      return { items: [...signOffs, ...(q.kind ? [] : disputes)].slice(0, q.limit) };
    },
  );

  app.get(
    '/v1/tenants/:tenant/review-queue/:id',
    { config: { action: 'review.read' }, schema: { summary: 'One pending item with its evidence ids and policy reason', params: tenantIdParams, response: errorResponses } },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const m = await deps.memories.get(principal.tenant, id);
      if (!m || m.status !== 'candidate') throw new DomainError(ErrorType.NotFound, 'review item: not found', 'id');
      return {
        id: m._id,
        kind: m.kind,
        namespace: m.namespace,
        policyReason: m.statusReason,
        ...evidenceOf(m, principal.roles),
      };
    },
  );

  app.post(
    '/v1/tenants/:tenant/review-queue/:id/decision',
    {
      config: { action: 'review.decide' },
      schema: { summary: 'Approve or reject a pending high-impact write, with a reason', params: tenantIdParams, body: jsonSchemaOf(DecisionSchema), response: errorResponses },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const body = parseOrThrow(DecisionSchema, request.body);
      const m = await deps.memories.get(principal.tenant, id);
      if (!m || m.status !== 'candidate') throw new DomainError(ErrorType.NotFound, 'review item: not found', 'id');
      if (m.writtenBy === principal.id) throw new DomainError(ErrorType.Forbidden, 'reviewer: may not decide on a write they made', 'reviewer');
      const reasonHash = deps.fingerprints.of('review-reason', principal.tenant, body.reason);
      let outcome: { status: string; decidedBy: string };
      try {
        outcome = await deps.client.workflow
          .getHandle(reviewWorkflowId(principal.tenant, id))
          .executeUpdate('decideReview', { args: [{ reviewer: principal.id, decision: body.decision, reasonHash }] });
      } catch (error) {
        const message = `${(error as Error).message ?? ''} ${(error as { cause?: Error }).cause?.message ?? ''}`;
        if (/already decided|may not decide/.test(message)) throw new DomainError(ErrorType.Conflict, `review: ${message.replace(/^.*?(review|reviewer): /, '').trim()}`, 'decision');
        throw error;
      }
      await deps.reviews.record({ _id: id, tenant: principal.tenant, memoryId: id, reviewer: principal.id, decision: body.decision, reason: body.reason, decidedAt: new Date() });
      return { id, status: outcome.status, decidedBy: outcome.decidedBy };
    },
  );

  app.get(
    '/v1/tenants/:tenant/disputes/:id',
    {
      config: { action: 'review.read' },
      schema: { summary: 'One dispute: both records side by side with their evidence ids and valid times', params: tenantIdParams, response: errorResponses },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const dispute = await deps.disputes.get(principal.tenant, id);
      if (!dispute) throw new DomainError(ErrorType.NotFound, 'dispute: not found', 'id');
      const records = await deps.memories.getMany(principal.tenant, dispute.memoryIds);
      return {
        id: dispute._id,
        state: dispute.state,
        namespace: dispute.namespace,
        openedAt: dispute.openedAt.toISOString(),
        writers: dispute.writers,
        resolution: dispute.resolution
          ? { ...dispute.resolution, at: dispute.resolution.at.toISOString() }
          : null,
        records: records.map((m) => ({
          id: m._id,
          status: m.status,
          kind: m.kind,
          validFrom: m.validFrom.toISOString(),
          validTo: m.validTo?.toISOString() ?? null,
          trustTier: m.trustTier,
          confidence: m.confidence,
          ...evidenceOf(m, principal.roles),
        })),
      };
    },
  );

  app.post(
    '/v1/tenants/:tenant/disputes/:id/resolution',
    {
      config: { action: 'review.decide' },
      schema: {
        summary: 'Adjudicate a dispute: keep one (the other is superseded), keep both, or reject one, with a reason',
        params: tenantIdParams,
        body: jsonSchemaOf(ResolutionSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const body = parseOrThrow(ResolutionSchema, request.body);
      const dispute = await deps.disputes.get(principal.tenant, id);
      if (!dispute) throw new DomainError(ErrorType.NotFound, 'dispute: not found', 'id');
      if (dispute.state === 'void') throw new DomainError(ErrorType.Conflict, 'dispute: closed, a record of it was erased', 'id');
      if (dispute.state !== 'open') throw new DomainError(ErrorType.Conflict, 'dispute: already adjudicated', 'id');
      if (dispute.writers.includes(principal.id)) {
        throw new DomainError(ErrorType.Forbidden, 'reviewer: may not adjudicate a dispute over a write they made', 'reviewer');
      }
      if (body.memoryId !== undefined && !dispute.memoryIds.includes(body.memoryId)) {
        throw validationError('memoryId', 'must name one of the two records of the dispute');
      }
      const reasonHash = deps.fingerprints.of('dispute-reason', principal.tenant, body.reason);
      // The words stay in MongoDB; the workflow carries their keyed hash, and the resolution event the words.
      await deps.disputes.keepReason(principal.tenant, id, reasonHash, body.reason);
      try {
        const result = await deps.client.workflow.getHandle(disputeWorkflowId(principal.tenant, id)).executeUpdate('adjudicate', {
          args: [{ reviewer: principal.id, outcome: body.outcome, ...(body.memoryId ? { memoryId: body.memoryId } : {}), reasonHash }],
        });
        return result;
      } catch (error) {
        const message = `${(error as Error).message ?? ''} ${(error as { cause?: Error }).cause?.message ?? ''}`;
        // Refused by the workflow's validator (nothing ran): the reason's words must not outlive a decision that
        // did not happen. Other failures keep them — the Update may still be applying the decision.
        if (/already adjudicated|may not adjudicate|closed/.test(message)) await deps.disputes.forgetReason(principal.tenant, id, reasonHash);
        if (/already adjudicated/.test(message)) throw new DomainError(ErrorType.Conflict, 'dispute: already adjudicated', 'id');
        if (/may not adjudicate/.test(message)) throw new DomainError(ErrorType.Forbidden, 'reviewer: may not adjudicate a dispute over a write they made', 'reviewer');
        throw error;
      }
    },
  );
}
