import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Principal } from '../../../src/governance/auth/principal.js';
import { roleAllows } from '../../../src/governance/auth/permissions.js';
import type { ErasureRequestStore } from '../../../src/governance/erasure/erasure-request-store.js';
import type { PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import type { RestrictionStore } from '../../../src/governance/rights/restriction-store.js';
import type { MemoryStore } from '../../../src/substrate/memories/memory-store.js';
import type { Fingerprinter } from '../../../src/substrate/fingerprint.js';
import type { AccessGateway } from '../../../src/temporal/access-gateway.js';
import type { RectificationGateway } from '../../../src/temporal/rectification-gateway.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { plainString } from '../../../src/shared/plain-text.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { principalOf } from '../authenticate.js';
import { presentAccess } from './access.routes.js';
import { presentErasureSummary } from './erasure.routes.js';
import { presentRectification } from './rectification.routes.js';
import { presentRestriction } from './restriction.routes.js';
import { policyAllows } from './policy-gate.js';
import { jsonSchemaOf } from './json-schema.js';
import { errorResponses, tenantParams } from './route-schemas.js';

const SubjectSchema = z.strictObject({ selector: z.strictObject({ subjectId: plainString(256) }) });

export interface SubjectRequestRouteDeps {
  erasures: Pick<ErasureRequestStore, 'withSelectorHash'>;
  accesses: Pick<AccessGateway, 'withSelectorHashes'>;
  rectifications: Pick<RectificationGateway, 'forMemories'>;
  restrictions: Pick<RestrictionStore, 'forSubjectHashes'>;
  memories: Pick<MemoryStore, 'idsBySubject'>;
  fingerprints: Fingerprinter;
  policies: { access: PolicyDocument; rectification: PolicyDocument; restriction: PolicyDocument };
}

/**
 * Every request about one data subject, of every kind, and which rights this principal may act on for them: what
 * the DPO's subject page shows. The subject travels in the body (never in a URL); requests keep it only as keyed
 * hashes, so each kind is matched by hashing it the way its filing was hashed. A kind the principal may not read
 * is answered as null, not as empty.
 */
export function registerSubjectRequestRoutes(app: FastifyInstance, deps: SubjectRequestRouteDeps): void {
  app.post(
    '/v1/tenants/:tenant/subject-rights/subject-requests',
    {
      // Who may file may look, as for the preview: ids, states, dates and counts, never content.
      config: { action: 'erasure.request', reads: 'ids' },
      schema: {
        summary:
          'Every request about one data subject (erasure, access, correction, restriction and objection) with its state and due date, and the rights this principal may act on for the subject',
        params: tenantParams,
        body: jsonSchemaOf(SubjectSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { subjectId } = parseOrThrow(SubjectSchema, request.body).selector;
      const tenant = principal.tenant;
      const reads = readsOf(deps, principal);
      const now = Date.now();

      const erasure = reads.erasure
        ? (
            await Promise.all(
              deps.fingerprints
                .all('erasure-selector', tenant, canonicalJson({ subjectId }))
                .map((hash) => deps.erasures.withSelectorHash(tenant, hash)),
            )
          )
            .flat()
            .sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime())
            .map((r) => presentErasureSummary(r, now))
        : null;

      // Each kind by its own keyed lookup, however many other requests the tenant has.
      const access = reads.access
        ? (
            await deps.accesses.withSelectorHashes(
              tenant,
              deps.fingerprints.all('access-selector', tenant, canonicalJson({ subjectId })),
            )
          ).map(presentAccess)
        : null;

      // A correction names a memory: the subject's are those whose record names them.
      const rectification = reads.rectification
        ? (await deps.rectifications.forMemories(tenant, await deps.memories.idsBySubject(tenant, subjectId))).map(
            presentRectification,
          )
        : null;

      const restrictions = reads.restriction
        ? (
            await deps.restrictions.forSubjectHashes(
              tenant,
              deps.fingerprints.all('restriction-subject', tenant, subjectId),
            )
          ).map(presentRestriction)
        : null;

      return { erasure, access, rectification, restrictions, may: mayOf(deps, principal) };
    },
  );
}

/** The kinds of request this principal may read: the role gate, then the kind's policy. */
function readsOf(deps: SubjectRequestRouteDeps, principal: Principal) {
  return {
    erasure: roleAllows(principal.roles, 'erasure.read'),
    access: roleAllows(principal.roles, 'access.read') && policyAllows(deps.policies.access, principal, 'read'),
    rectification:
      roleAllows(principal.roles, 'rectification.read') && policyAllows(deps.policies.rectification, principal, 'read'),
    restriction:
      roleAllows(principal.roles, 'restriction.read') &&
      policyAllows(deps.policies.restriction, principal, 'read', { kind: 'any' }),
  };
}

/** The rights this principal may act on: the same questions the filing routes ask, asked without an audit entry. */
function mayOf(deps: SubjectRequestRouteDeps, principal: Principal) {
  const restriction = (action: 'file' | 'lift', kind: 'restriction' | 'objection') =>
    roleAllows(principal.roles, 'restriction.manage') &&
    policyAllows(deps.policies.restriction, principal, action, { kind });
  return {
    erasure: roleAllows(principal.roles, 'erasure.request'),
    access: roleAllows(principal.roles, 'access.request') && policyAllows(deps.policies.access, principal, 'file'),
    rectification:
      roleAllows(principal.roles, 'rectification.request') &&
      policyAllows(deps.policies.rectification, principal, 'file'),
    restriction: restriction('file', 'restriction'),
    objection: restriction('file', 'objection'),
    lift: restriction('lift', 'restriction') && restriction('lift', 'objection'),
  };
}
