import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import type { MemoryStore } from '../../../src/substrate/memories/memory-store.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';
import type { ReviewStore } from '../../../src/governance/review/review-store.js';
import type { Fingerprinter } from '../../../src/substrate/fingerprint.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { DomainError, ErrorType, validationError } from '../../../src/shared/errors.js';
import { principalOf } from '../authenticate.js';
import { roleAllows } from '../../../src/governance/auth/permissions.js';
import type { Role } from '../../../src/governance/auth/principal.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { callWorkflow, toApiError } from '../workflow-errors.js';
import type { AdjudicationInput } from '../../../src/temporal/contracts/dispute-review.contract.js';
import type { DisputeStore } from '../../../src/governance/disputes/dispute-store.js';
import { ADJUDICATIONS } from '../../../src/governance/disputes/contradiction.js';
import { seeMemory } from '../../../src/governance/read/read-judge.js';
import { presentReviewRecord } from '../presenters.js';
import { notVisible, requireReader, type ReadingDeps } from './read-access.js';
import { decodeCursor, encodeCursor, nextCursor } from './pagination.js';
import type { PageKey } from '../../../src/substrate/mongo/keyset-page.js';
import type { DecisionGateway } from '../../../src/temporal/decision-gateway.js';
import { selfReviewRefusal } from '../../../src/shared/self-review.js';

/** Statuses of a record an erasure has reached: to a reviewer it is simply gone. */
const ERASED: ReadonlySet<string> = new Set(['deleted', 'purged']);

/** What a losing reviewer is told: who decided (a person or the deadline's default), never what was decided on. */
function alreadyDecided(m: MemoryRecord | null): string {
  if (!m || ERASED.has(m.status)) return 'review item: not found';
  return m.statusReason?.startsWith('review:policy:')
    ? 'review: already decided by the policy default at the deadline'
    : 'review: already decided by another reviewer';
}

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
  olderThanHours: z.coerce
    .number()
    .min(0)
    .max(24 * 365)
    .optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional(),
});

/** The queue's parts, in the order it lists them: sign-offs (oldest first), then disputes (oldest first). */
const QUEUE_PARTS = ['sign-off', 'dispute'] as const;
type QueuePart = (typeof QUEUE_PARTS)[number];

/** The reviewer's queue of high-impact writes waiting for sign-off, and the decision on one. */
export function registerReviewRoutes(
  app: FastifyInstance,
  deps: ReadingDeps & {
    memories: MemoryStore;
    reviews: ReviewStore;
    disputes: DisputeStore;
    decisions: DecisionGateway;
    fingerprints: Fingerprinter;
  },
): void {
  /**
   * What a losing caller is told about a dispute that is no longer open. That an erasure voided it is told only to
   * a caller with erasure rights: to anyone else it reads as a dispute closed by another decision.
   */
  async function disputeFinished(tenant: string, id: string, roles: readonly Role[]): Promise<string> {
    const dispute = await deps.disputes.get(tenant, id);
    if (dispute?.state === 'void' && roleAllows(roles, 'erasure.read'))
      return 'dispute: closed, a record of it was erased';
    return 'dispute: already closed by another decision';
  }

  /**
   * The dispute as this caller may know it: one an erasure voided is, to a caller without erasure rights, a dispute
   * that does not exist (as the erased records it was about are).
   */
  async function disputeFor(tenant: string, id: string, roles: readonly Role[]) {
    const dispute = await deps.disputes.get(tenant, id);
    if (!dispute || (dispute.state === 'void' && !roleAllows(roles, 'erasure.read')))
      throw new DomainError(ErrorType.NotFound, 'dispute: not found', 'id');
    return dispute;
  }

  app.get(
    '/v1/tenants/:tenant/review-queue',
    {
      config: { action: 'review.read', reads: 'ids' },
      schema: {
        summary:
          'Pending sign-offs, then open disputes, oldest first (filters: type, namespace, kind, age; a page at a time)',
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const tenant = principalOf(request).tenant;
      const q = parseOrThrow(QueueQuerySchema, request.query);
      const cutoff = q.olderThanHours !== undefined ? Date.now() - q.olderThanHours * 3_600_000 : Infinity;
      // A kind filter names memory kinds: disputes are listed only when none is given.
      const parts: QueuePart[] =
        q.type === 'dispute' ? ['dispute'] : q.type === 'sign-off' || q.kind ? ['sign-off'] : [...QUEUE_PARTS];
      const from = decodeCursor(q.cursor, parts);
      const signOffs = async (limit: number, after: PageKey | null) => {
        const page = await deps.memories.pageByStatus(tenant, 'candidate', limit, after);
        const items = page.items
          .filter(
            (m) =>
              (!q.namespace || m.namespace === q.namespace) &&
              (!q.kind || m.kind === q.kind) &&
              m.recordedAt.getTime() <= cutoff,
          )
          .map((m) => ({
            type: 'sign-off' as const,
            id: m._id,
            kind: m.kind,
            namespace: m.namespace,
            recordedAt: m.recordedAt.toISOString(),
            reason: m.statusReason,
            writtenBy: m.writtenBy,
          }));
        return { items, next: page.next };
      };
      const disputes = async (limit: number, after: PageKey | null) => {
        const page = await deps.disputes.pageOpen(tenant, limit, after);
        const items = page.items
          .filter((d) => (!q.namespace || d.namespace === q.namespace) && d.openedAt.getTime() <= cutoff)
          .map((d) => ({
            type: 'dispute' as const,
            id: d._id,
            namespace: d.namespace,
            memoryIds: d.memoryIds,
            recordedAt: d.openedAt.toISOString(),
            writtenBy: d.writers.join(','),
          }));
        return { items, next: page.next };
      };
      // Each part is read once per page: where it has more, the page ends there; where it ends, the next part fills
      // the room left. Filters apply to the rows read, so a page may hold fewer than `limit` items.
      const items: object[] = [];
      let index = from?.part ? parts.indexOf(from.part as QueuePart) : 0;
      let after = from?.key ?? null;
      for (; index < parts.length; index++, after = null) {
        const part = parts[index]!;
        const room = q.limit - items.length;
        if (room === 0) return { items, nextCursor: encodeCursor({ part, key: null }) };
        const page = part === 'sign-off' ? await signOffs(room, after) : await disputes(room, after);
        items.push(...page.items);
        if (page.next) return { items, nextCursor: nextCursor(page.next, part) };
      }
      return { items, nextCursor: null };
    },
  );

  app.get(
    '/v1/tenants/:tenant/review-queue/:id',
    {
      config: { action: 'review.read', reads: 'records' },
      schema: {
        summary: 'One pending item with its evidence ids and policy reason',
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      // The queue's gate already shows an admin its ids: an admin sees the item without content.
      const reader = await requireReader(
        deps,
        principal,
        { intent: 'history', contentFreeForGate: true },
        'review item',
      );
      const m = await deps.memories.get(principal.tenant, id);
      const sight = m?.status === 'candidate' ? seeMemory(reader, m) : null;
      if (!sight) throw await notVisible(deps, reader, 'review item', m?.status === 'candidate' ? m._id : null);
      return presentReviewRecord(sight);
    },
  );

  app.post(
    '/v1/tenants/:tenant/review-queue/:id/decision',
    {
      config: { action: 'review.decide', reads: 'ids' },
      schema: {
        summary: 'Approve or reject a pending high-impact write, with a reason',
        params: tenantIdParams,
        body: jsonSchemaOf(DecisionSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const body = parseOrThrow(DecisionSchema, request.body);
      const m = await deps.memories.get(principal.tenant, id);
      if (!m || ERASED.has(m.status)) throw new DomainError(ErrorType.NotFound, 'review item: not found', 'id');
      if (m.status !== 'candidate') {
        // Decided by review (a losing reviewer): 409 saying by whom; never waiting for review: not a queue item.
        if (m.statusReason?.startsWith('review:'))
          throw new DomainError(ErrorType.Conflict, alreadyDecided(m), 'decision');
        throw new DomainError(ErrorType.NotFound, 'review item: not found', 'id');
      }
      const self = selfReviewRefusal({ kind: 'review', writtenBy: m.writtenBy }, principal.id);
      if (self) throw new DomainError(ErrorType.Forbidden, self, 'reviewer');
      const reasonHash = deps.fingerprints.of('review-reason', principal.tenant, body.reason);
      const outcome = await callWorkflow(
        { field: 'decision', finished: alreadyDecided(await deps.memories.get(principal.tenant, id)) },
        () =>
          deps.decisions.decideReview(principal.tenant, id, {
            reviewer: principal.id,
            decision: body.decision,
            reasonHash,
          }),
      );
      // Only the winning decision's reason is kept. Checked after writing: an erasure marks the record deleted
      // before it purges the review reasons of its records, so a reason written after that mark is taken back here.
      await deps.reviews.record({
        _id: id,
        tenant: principal.tenant,
        memoryId: id,
        reviewer: principal.id,
        decision: body.decision,
        reason: body.reason,
        decidedAt: new Date(),
      });
      const now = await deps.memories.get(principal.tenant, id);
      if (!now || ERASED.has(now.status)) {
        await deps.reviews.forget(principal.tenant, [id]);
        throw new DomainError(ErrorType.NotFound, 'review item: not found', 'id');
      }
      return { id, status: outcome.status, decidedBy: outcome.decidedBy };
    },
  );

  app.get(
    '/v1/tenants/:tenant/disputes/:id',
    {
      config: { action: 'review.read', reads: 'records' },
      schema: {
        summary: 'One dispute: both records side by side with their evidence ids and valid times',
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const reader = await requireReader(deps, principal, { intent: 'history', contentFreeForGate: true }, 'dispute');
      const dispute = await disputeFor(principal.tenant, id, principal.roles);
      const records = await deps.memories.getMany(principal.tenant, dispute.memoryIds);
      const byId = new Map(records.map((m) => [m._id, m]));
      return {
        id: dispute._id,
        state: dispute.state,
        namespace: dispute.namespace,
        openedAt: dispute.openedAt.toISOString(),
        writers: dispute.writers,
        resolution: dispute.resolution ? { ...dispute.resolution, at: dispute.resolution.at.toISOString() } : null,
        // Each side as the judge lets this reader see it; a side an erasure reached (or a hold restricts) is
        // named by id only, exactly as a record that never existed.
        records: dispute.memoryIds.map((memoryId) => {
          const sight = seeMemory(reader, byId.get(memoryId));
          return sight ? presentReviewRecord(sight) : { id: memoryId, view: 'withheld' as const };
        }),
      };
    },
  );

  app.post(
    '/v1/tenants/:tenant/disputes/:id/resolution',
    {
      config: { action: 'review.decide', reads: 'ids' },
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
      const dispute = await disputeFor(principal.tenant, id, principal.roles);
      if (dispute.state !== 'open')
        throw new DomainError(ErrorType.Conflict, await disputeFinished(principal.tenant, id, principal.roles), 'id');
      const self = selfReviewRefusal({ kind: 'dispute', writers: dispute.writers }, principal.id);
      if (self) throw new DomainError(ErrorType.Forbidden, self, 'reviewer');
      if (body.memoryId !== undefined && !dispute.memoryIds.includes(body.memoryId)) {
        throw validationError('memoryId', 'must name one of the two records of the dispute');
      }
      const reasonHash = deps.fingerprints.of('dispute-reason', principal.tenant, body.reason);
      // The words wait in MongoDB under a key of this call alone (the workflow carries the keyed hash, the resolution
      // event the words): a losing caller's clean-up never touches the words of the decision that won.
      const reasonKey = `${reasonHash}:${randomUUID()}`;
      await deps.disputes.keepReason(principal.tenant, id, reasonKey, body.reason);
      const args: AdjudicationInput = {
        reviewer: principal.id,
        outcome: body.outcome,
        ...(body.memoryId ? { memoryId: body.memoryId } : {}),
        reasonHash,
        reasonKey,
      };
      try {
        return await deps.decisions.adjudicate(principal.tenant, id, args);
      } catch (error) {
        const finished = await disputeFinished(principal.tenant, id, principal.roles);
        let refused = toApiError(error, { field: 'id', finished });
        // The workflow refuses a decided and a voided dispute alike; the caller is told what its rights allow.
        if (refused instanceof DomainError && refused.type === ErrorType.Conflict && refused.field === 'id')
          refused = new DomainError(ErrorType.Conflict, finished, 'id');
        // Refused (nothing was decided): the words must not outlive a decision that did not happen. An unexpected
        // failure keeps them — the Update may still be applying the decision, which then removes them itself.
        if (refused instanceof DomainError) await deps.disputes.forgetReason(principal.tenant, id, reasonKey);
        throw refused;
      }
    },
  );
}
