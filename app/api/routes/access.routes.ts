import type { FastifyInstance } from 'fastify';
import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import type { Principal } from '../../../src/governance/auth/principal.js';
import type { PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import { AccessFilingSchema, type AccessRequest } from '../../../src/governance/rights/access-request.js';
import type { AccessGateway } from '../../../src/temporal/access-gateway.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { principalOf } from '../authenticate.js';
import { presentAccessPackage } from '../presenters.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { createPolicyGate } from './policy-gate.js';
import type { AccessRequestView } from '../../../src/shared/api-contract/access.js';

/** What a request shows: ids, the selector's kind and keyed hash, counts and dates; never the subject. */
export function presentAccess(r: AccessRequest): AccessRequestView {
  return {
    id: r._id,
    state: r.state,
    selectorKind: r.selectorKind,
    selectorHash: r.selectorHash,
    requester: r.requester,
    receivedAt: r.receivedAt.toISOString(),
    dueAt: r.dueAt.toISOString(),
    counts: r.counts,
    packageSha256: r.packageHash,
    readyAt: r.readyAt?.toISOString() ?? null,
    expiresAt: r.expiresAt?.toISOString() ?? null,
    downloads: r.downloads,
  };
}

export interface AccessRouteDeps {
  accesses: AccessGateway;
  audit: AuditLog;
  policy: PolicyDocument;
}

/**
 * Access and portability requests (Art. 15, 20): the DPO files one for a selector, watches it, and downloads the
 * signed package while its delivery window lasts. The subject-access policy decides who may do which.
 */
export function registerAccessRoutes(app: FastifyInstance, deps: AccessRouteDeps): void {
  const base = '/v1/tenants/:tenant/subject-rights/access';

  const authorise = createPolicyGate({
    policy: deps.policy,
    audit: deps.audit,
    prefix: 'subject-access',
    noun: () => 'an access request',
    reads: ['read'],
  });

  const found = async (principal: Principal, id: string) => {
    const request = await deps.accesses.get(principal.tenant, id);
    if (!request) throw new DomainError(ErrorType.NotFound, `no access request ${id}`, 'id');
    return request;
  };

  app.post(
    base,
    {
      config: { action: 'access.request', reads: 'ids' },
      schema: {
        summary:
          'File an access and portability request (Art. 15, 20): a signed package of what Lethe holds about the selector, built by a durable workflow; idempotent by requestKey',
        params: tenantParams,
        body: jsonSchemaOf(AccessFilingSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const filing = parseOrThrow(AccessFilingSchema, request.body);
      await authorise(principal, 'file');
      const { request: filed, created } = await deps.accesses.file(principal, filing);
      return reply.code(created ? 202 : 200).send(presentAccess(filed));
    },
  );

  app.get(
    base,
    {
      config: { action: 'access.read', reads: 'ids' },
      schema: {
        summary: "The tenant's access requests, newest first (ids, counts and dates)",
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await authorise(principal, 'read');
      return { items: (await deps.accesses.list(principal.tenant, 100)).map(presentAccess) };
    },
  );

  app.get(
    `${base}/:id`,
    {
      config: { action: 'access.read', reads: 'ids' },
      schema: {
        summary: "An access request's state: counts, dates and the package's digest (never its content)",
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await authorise(principal, 'read');
      return presentAccess(await found(principal, (request.params as { id: string }).id));
    },
  );

  app.get(
    `${base}/:id/package`,
    {
      config: { action: 'access.download', reads: 'records' },
      schema: {
        summary:
          "The signed access package (JSON): the subject's records in clear, with purposes, retention, provenance, disputes, earlier erasures and recipients; every download is audited",
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await authorise(principal, 'download');
      const id = (request.params as { id: string }).id;
      const state = (await found(principal, id)).state;
      if (state === 'expired')
        throw new DomainError(ErrorType.Gone, `access request ${id}: its package was erased after delivery`, 'id');
      if (state !== 'ready')
        throw new DomainError(ErrorType.Conflict, `access request ${id}: its package is not ready (${state})`);
      // Ready on record but gone from the store: its window ended a moment ago, or an erasure reached its records.
      const pkg = await deps.accesses.download(principal, id);
      if (!pkg) throw new DomainError(ErrorType.Gone, `access request ${id}: its package was erased`, 'id');
      return reply
        .header('content-disposition', `attachment; filename="${id}.json"`)
        .header('cache-control', 'no-store')
        .send(presentAccessPackage(pkg));
    },
  );
}
