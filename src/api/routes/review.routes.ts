import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import type { MemoryStore } from '../../substrate/memories/memory-store.js';
import type { ReviewStore } from '../../governance/review/review-store.js';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { parseOrThrow } from '../../shared/validation.js';
import { DomainError, ErrorType } from '../../shared/errors.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { reviewWorkflowId } from '../../shared/workflow-ids.js';

const DecisionSchema = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  reason: z.string().min(1).max(2000),
});

const QueueQuerySchema = z.strictObject({
  namespace: z.string().min(1).max(128).optional(),
  kind: z.string().min(1).max(32).optional(),
  olderThanHours: z.coerce.number().min(0).max(24 * 365).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** The reviewer's queue of high-impact writes waiting for sign-off, and the decision on one. */
export function registerReviewRoutes(
  app: FastifyInstance,
  deps: { memories: MemoryStore; reviews: ReviewStore; client: Client; fingerprints: Fingerprinter },
): void {
  app.get(
    '/v1/tenants/:tenant/review-queue',
    {
      config: { action: 'review.read' },
      schema: { summary: 'Pending sign-offs (filters: namespace, kind, age)', params: tenantParams, response: errorResponses },
    },
    async (request) => {
      const tenant = principalOf(request).tenant;
      const q = parseOrThrow(QueueQuerySchema, request.query);
      const cutoff = q.olderThanHours !== undefined ? Date.now() - q.olderThanHours * 3_600_000 : Infinity;
      const pending = await deps.memories.listByStatus(tenant, 'candidate', q.limit);
      return {
        items: pending
          .filter((m) => (!q.namespace || m.namespace === q.namespace) && (!q.kind || m.kind === q.kind) && m.recordedAt.getTime() <= cutoff)
          .map((m) => ({ id: m._id, kind: m.kind, namespace: m.namespace, recordedAt: m.recordedAt.toISOString(), reason: m.statusReason, writtenBy: m.writtenBy })),
      };
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
        evidence: { eventIds: m.provenance.eventIds, parentIds: m.provenance.parentIds, derivationRule: m.provenance.derivationRule },
        writtenBy: m.writtenBy,
        // Content only to a reviewer (an admin sees the queue, not what is in it).
        ...(principal.roles.includes('reviewer') ? { content: m.content } : {}),
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
}
