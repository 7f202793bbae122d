import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import type { HoldStore } from '../../../src/governance/holds/hold-store.js';
import { HoldPlacementSchema, holdScopeKind, type LegalHold } from '../../../src/governance/holds/legal-hold.js';
import type { PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import { createPolicyGate } from './policy-gate.js';
import type { Principal } from '../../../src/governance/auth/principal.js';
import type { ErasureGateway } from '../../../src/temporal/erasure-gateway.js';
import type { ErasureRequestStore } from '../../../src/governance/erasure/erasure-request-store.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { callWorkflow } from '../workflow-errors.js';
import { decodeCursor, nextCursor, pageQueryProperties } from './pagination.js';

/** A hold without its scope's clear values; a subject hold shows the subject's keyed hash. */
function presentHold(h: LegalHold) {
  return {
    id: h._id,
    scopeKind: holdScopeKind(h.scope),
    ...('subjectHash' in h.scope ? { subjectHash: h.scope.subjectHash } : {}),
    caseRef: h.caseRef,
    active: h.active,
    placedBy: h.placedBy,
    placedAt: h.placedAt.toISOString(),
    releasedBy: h.releasedBy,
    releasedAt: h.releasedAt?.toISOString() ?? null,
  };
}

/** Legal holds: placed and released by the legal role as policy allows, audited; a release resumes erasures. */
export function registerHoldRoutes(
  app: FastifyInstance,
  deps: {
    holds: HoldStore;
    audit: AuditLog;
    policy: PolicyDocument;
    erasures: ErasureGateway;
    requests: ErasureRequestStore;
  },
): void {
  const gate = createPolicyGate({
    policy: deps.policy,
    audit: deps.audit,
    prefix: 'hold',
    noun: () => 'a hold',
    reads: [],
  });
  const authorise = (principal: Principal, action: 'place' | 'release', scopeKind: string) =>
    gate(principal, action, { scopeKind });

  app.get(
    '/v1/tenants/:tenant/legal-holds',
    {
      config: { action: 'hold.manage', reads: 'ids' },
      schema: {
        summary:
          'Active legal holds, oldest first, each with the ids of the erasure requests it keeps from finishing (a page at a time)',
        params: tenantParams,
        querystring: { type: 'object', additionalProperties: false, properties: pageQueryProperties },
        response: errorResponses,
      },
    },
    async (request) => {
      const tenant = principalOf(request).tenant;
      const { limit, cursor } = request.query as { limit: number; cursor?: string };
      const page = await deps.holds.activePage(tenant, limit, decodeCursor(cursor)?.key ?? null);
      const items = await Promise.all(
        page.items.map(async (h) => ({ ...presentHold(h), blocks: await deps.requests.idsHeldBy(tenant, h._id) })),
      );
      return { items, nextCursor: nextCursor(page.next) };
    },
  );

  app.post(
    '/v1/tenants/:tenant/legal-holds',
    {
      config: { action: 'hold.manage', reads: 'ids' },
      schema: {
        summary: 'Place a legal hold (by subject, records or namespace)',
        params: tenantParams,
        body: jsonSchemaOf(HoldPlacementSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const placement = parseOrThrow(HoldPlacementSchema, request.body);
      await authorise(principal, 'place', holdScopeKind(placement.scope));
      const hold: LegalHold = {
        _id: `hold_${randomUUID()}`,
        tenant: principal.tenant,
        scope: placement.scope,
        caseRef: placement.caseRef,
        placedBy: principal.id,
        placedAt: new Date(),
        active: true,
        releasedBy: null,
        releasedAt: null,
      };
      const stored = await deps.holds.place(hold);
      await deps.audit.append({
        tenant: hold.tenant,
        actor: principal.id,
        action: 'hold.placed',
        target: hold._id,
        outcome: 'ok',
        details: { scopeKind: holdScopeKind(hold.scope) },
      });
      return reply.code(201).send(presentHold(stored));
    },
  );

  app.post(
    '/v1/tenants/:tenant/legal-holds/:id/release',
    {
      config: { action: 'hold.manage', reads: 'ids' },
      schema: {
        summary: 'Release a legal hold; erasures it blocked resume',
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const hold = await deps.holds.get(principal.tenant, id);
      if (!hold) throw new DomainError(ErrorType.NotFound, 'legal hold: not found', 'id');
      await authorise(principal, 'release', holdScopeKind(hold.scope));
      const released = await deps.holds.release(principal.tenant, id, principal.id);
      if (released) {
        await deps.audit.append({
          tenant: principal.tenant,
          actor: principal.id,
          action: 'hold.released',
          target: id,
          outcome: 'ok',
          idempotencyKey: `hold:${id}:released`,
        });
      }
      // Woken either way: a winner that failed between its release and this call is completed by whoever comes
      // next, and waking a request twice only makes it look again.
      const resumed = await callWorkflow({ field: 'id', finished: 'legal hold: released' }, () =>
        deps.erasures.holdReleased(principal.tenant, id),
      );
      const now = (await deps.holds.get(principal.tenant, id))!;
      if (!released) {
        throw new DomainError(
          ErrorType.Conflict,
          `legal hold: already released by ${now.releasedBy ?? 'another principal'}`,
          'id',
        );
      }
      return { ...presentHold(now), resumedRequests: resumed };
    },
  );
}
