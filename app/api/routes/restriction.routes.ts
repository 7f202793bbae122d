import type { FastifyInstance } from 'fastify';
import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import type { Principal } from '../../../src/governance/auth/principal.js';
import type { PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import {
  kindOf,
  MAX_ACTIVE_RESTRICTIONS,
  RestrictionFilingSchema,
  RestrictionLiftSchema,
  type SubjectRestriction,
} from '../../../src/governance/rights/restriction.js';
import { restrictionSubjectHash, type RestrictionStore } from '../../../src/governance/rights/restriction-store.js';
import { derivedFromSubject, type RestrictionLineageDeps } from '../../../src/governance/rights/restriction-lineage.js';
import type { Fingerprinter, TenantMacs } from '../../../src/substrate/fingerprint.js';
import type { RestrictionView } from '../../../src/shared/api-contract/restriction.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { createPolicyGate } from './policy-gate.js';
import { decodeCursor, nextCursor, pageQueryProperties } from './pagination.js';

/** What a restriction shows: the subject's keyed hash, never the subject; reasons are not shown at all. */
export function presentRestriction(r: SubjectRestriction): RestrictionView {
  return {
    id: r._id,
    kind: r.kind,
    subjectHash: r.subjectHash,
    purposes: r.purposes,
    /** Records derived from the subject's that the restriction follows (a count: they may be about others). */
    derived: r.derivedIds?.length ?? 0,
    legalGround: r.legalGround,
    active: r.active,
    filedBy: r.filedBy,
    filedAt: r.filedAt.toISOString(),
    liftedBy: r.liftedBy,
    liftedAt: r.liftedAt?.toISOString() ?? null,
  };
}

export interface RestrictionRouteDeps {
  restrictions: RestrictionStore;
  /** Where the records derived from the subject's are found: the restriction follows them. */
  lineage: RestrictionLineageDeps;
  audit: AuditLog;
  policy: PolicyDocument;
  fingerprints: Fingerprinter;
  macs: TenantMacs;
}

/**
 * Restriction of processing (Art. 18) and objection to purposes (Art. 21), filed and lifted by the DPO as the
 * subject-restrictions policy allows. The read judge applies them from the moment they are stored.
 */
export function registerRestrictionRoutes(app: FastifyInstance, deps: RestrictionRouteDeps): void {
  const base = '/v1/tenants/:tenant/subject-rights/restrictions';

  const gate = createPolicyGate({
    policy: deps.policy,
    audit: deps.audit,
    prefix: 'restriction',
    noun: (facts) => `a ${facts.kind}`,
    reads: ['read'],
  });
  const authorise = (principal: Principal, action: 'file' | 'lift' | 'read', kind: string) =>
    gate(principal, action, { kind });

  app.post(
    base,
    {
      config: { action: 'restriction.manage', reads: 'ids' },
      schema: {
        summary:
          'File a restriction of processing (no purposes: Art. 18) or an objection to purposes (Art. 21); idempotent by requestKey',
        params: tenantParams,
        body: jsonSchemaOf(RestrictionFilingSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const filing = parseOrThrow(RestrictionFilingSchema, request.body);
      const kind = kindOf(filing);
      await authorise(principal, 'file', kind);
      const tenant = principal.tenant;
      const id = `rst_${deps.macs.of(tenant, 'restriction-request-key', filing.requestKey).slice(0, 24)}`;
      const subjectHash = restrictionSubjectHash(deps.fingerprints, tenant, filing.selector.subjectId);
      const purposes = filing.purposes ? [...filing.purposes].sort() : null;
      const reasonHash = deps.fingerprints.of('restriction-reason', tenant, filing.reason);
      const existing = await deps.restrictions.get(tenant, id);
      if (!existing && (await deps.restrictions.countActive(tenant)) >= MAX_ACTIVE_RESTRICTIONS) {
        throw new DomainError(
          ErrorType.Conflict,
          `restrictions: the tenant holds ${MAX_ACTIVE_RESTRICTIONS} active restrictions and objections, the most it may; lift one first`,
          'selector',
        );
      }
      const derivedIds = existing ? [] : await derivedFromSubject(deps.lineage, tenant, filing.selector.subjectId);
      const { restriction, created } = existing
        ? { restriction: existing, created: false }
        : await deps.restrictions.file({
            _id: id,
            tenant,
            kind,
            subjectHash,
            keyId: deps.fingerprints.keyId,
            purposes,
            legalGround: filing.legalGround,
            reasonHash,
            filedBy: principal.id,
            filedAt: new Date(),
            active: true,
            derivedIds,
            liftedBy: null,
            liftedAt: null,
            liftReasonHash: null,
          });
      if (!created) {
        // The same key names one filing: another subject, ground or purposes under it is a mistake, not a retry.
        const same =
          deps.fingerprints
            .all('restriction-subject', tenant, filing.selector.subjectId)
            .includes(restriction.subjectHash) &&
          restriction.legalGround === filing.legalGround &&
          JSON.stringify(restriction.purposes) === JSON.stringify(purposes);
        if (!same)
          throw new DomainError(
            ErrorType.Conflict,
            'requestKey: already used for another filing (nothing was changed)',
            'requestKey',
          );
      }
      // On a retry too: a filing that stopped before marking the set changed is in force once it is answered.
      await deps.restrictions.changed(tenant);
      // Appended on a retry too, under one key: a filing whose entry was not written gets it now, once.
      await deps.audit.append({
        tenant,
        actor: restriction.filedBy,
        action: 'restriction.filed',
        target: id,
        outcome: 'ok',
        details: {
          kind: restriction.kind,
          legalGround: restriction.legalGround,
          purposes: restriction.purposes?.length ?? 0,
          derived: restriction.derivedIds?.length ?? 0,
          subjectHash: restriction.subjectHash,
        },
        idempotencyKey: `restriction:${id}:filed`,
      });
      return reply.code(created ? 201 : 200).send(presentRestriction(restriction));
    },
  );

  app.get(
    base,
    {
      config: { action: 'restriction.read', reads: 'ids' },
      schema: {
        summary: "The tenant's restrictions and objections, most recent first (a page at a time)",
        params: tenantParams,
        querystring: { type: 'object', additionalProperties: false, properties: pageQueryProperties },
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await authorise(principal, 'read', 'any');
      const { limit, cursor } = request.query as { limit: number; cursor?: string };
      const page = await deps.restrictions.page(principal.tenant, limit, decodeCursor(cursor)?.key ?? null);
      return { items: page.items.map(presentRestriction), nextCursor: nextCursor(page.next) };
    },
  );

  app.get(
    `${base}/:id`,
    {
      config: { action: 'restriction.read', reads: 'ids' },
      schema: { summary: 'A restriction or objection', params: tenantIdParams, response: errorResponses },
    },
    async (request) => {
      const principal = principalOf(request);
      await authorise(principal, 'read', 'any');
      const { id } = request.params as { id: string };
      const found = await deps.restrictions.get(principal.tenant, id);
      if (!found) throw new DomainError(ErrorType.NotFound, 'restriction: not found', 'id');
      return presentRestriction(found);
    },
  );

  app.post(
    `${base}/:id/lift`,
    {
      config: { action: 'restriction.manage', reads: 'ids' },
      schema: {
        summary: "Lift a restriction or objection: agents read the subject's records again",
        params: tenantIdParams,
        body: jsonSchemaOf(RestrictionLiftSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const { reason } = parseOrThrow(RestrictionLiftSchema, request.body);
      const found = await deps.restrictions.get(principal.tenant, id);
      if (!found) throw new DomainError(ErrorType.NotFound, 'restriction: not found', 'id');
      await authorise(principal, 'lift', found.kind);
      const lifted = await deps.restrictions.lift(
        principal.tenant,
        id,
        principal.id,
        deps.fingerprints.of('restriction-reason', principal.tenant, reason),
      );
      await deps.restrictions.changed(principal.tenant);
      const now = (await deps.restrictions.get(principal.tenant, id))!;
      // Appended by whoever comes, under one key, with the winner's name: a winner that stopped before its entry
      // is completed by the next call.
      await deps.audit.append({
        tenant: principal.tenant,
        actor: now.liftedBy ?? principal.id,
        action: 'restriction.lifted',
        target: id,
        outcome: 'ok',
        details: { kind: found.kind, purposes: found.purposes?.length ?? 0 },
        idempotencyKey: `restriction:${id}:lifted`,
      });
      if (!lifted)
        throw new DomainError(
          ErrorType.Conflict,
          `restriction: already lifted by ${now.liftedBy ?? 'another principal'}`,
          'id',
        );
      return presentRestriction(now);
    },
  );
}
