import type { FastifyInstance } from 'fastify';
import type { EventStore } from '../../substrate/events/event-store.js';
import type { MemoryStore } from '../../substrate/memories/memory-store.js';
import type { EventRecord, MemoryRecord } from '../../substrate/model/records.js';
import type { Principal } from '../../governance/auth/principal.js';
import { DomainError, ErrorType } from '../../shared/errors.js';
import { principalOf } from '../authenticate.js';
import { z } from 'zod';
import { parseOrThrow } from '../../shared/validation.js';
import type { PolicyDocument } from '../../governance/policy/evaluate.js';
import type { AuditLog } from '../../governance/audit/audit-log.port.js';
import { requireReadAccess } from './read-access.js';
import { errorResponses, tenantIdParams } from './route-schemas.js';
import { derivationDisclosure } from '../../governance/derivation/disclosure.js';

/** A foreign id answers exactly as a missing one: same status, same body. */
function notFound(kind: string): DomainError {
  return new DomainError(ErrorType.NotFound, `${kind}: not found`, 'id');
}

export function presentEvent(e: EventRecord) {
  return {
    id: e._id,
    namespace: e.namespace,
    source: e.source,
    externalId: e.externalId,
    subjects: e.subjects,
    content: e.content,
    contentHash: e.contentHash,
    sensitivity: e.sensitivity,
    trustTier: e.trustTier,
    occurredAt: e.occurredAt.toISOString(),
    recordedAt: e.recordedAt.toISOString(),
    correctionOf: e.correctionOf,
  };
}

export function presentMemory(m: MemoryRecord) {
  const disclosure = derivationDisclosure(m.derivation, m.qualifierDrift);
  return {
    id: m._id,
    namespace: m.namespace,
    subjects: m.subjects,
    kind: m.kind,
    attribute: m.attribute,
    content: m.content,
    validFrom: m.validFrom.toISOString(),
    validTo: m.validTo?.toISOString() ?? null,
    recordedAt: m.recordedAt.toISOString(),
    policy: m.policy,
    provenance: m.provenance,
    trustTier: m.trustTier,
    confidence: m.confidence,
    version: m.version,
    status: m.status,
    scope: m.scope ?? null,
    // Repaired, signed off over an audit that was not supported, or a correction that dropped qualifiers: the
    // reader is told so (a flag and counts).
    ...(disclosure ? { derivationAudit: disclosure } : {}),
  };
}

const HIDDEN_STATUSES = new Set(['deleted', 'purged']);
/** Never served as context: a rejected write or an expired record is read only by those who govern it. */
const UNSERVED_STATUSES = new Set(['rejected', 'expired', 'candidate']);
const GOVERNING_ROLES = new Set(['reviewer', 'dpo', 'legal']);

/** A record under a legal hold is readable by the legal role only; to anyone else it is missing. */
function restrictedFrom(record: { restrictedBy?: string[] }, principal: Principal): boolean {
  return (record.restrictedBy?.length ?? 0) > 0 && !principal.roles.includes('legal');
}

const ReadQuerySchema = z.strictObject({ purpose: z.string().min(1).max(64).optional() });

export function registerReadRoutes(
  app: FastifyInstance,
  deps: { events: EventStore; memories: MemoryStore; readPolicy: PolicyDocument; audit: AuditLog },
): void {
  app.get(
    '/v1/tenants/:tenant/events/:id',
    {
      config: { action: 'event.read' },
      schema: { summary: 'Read one event', params: tenantIdParams, response: errorResponses },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const principal = principalOf(request);
      const event = await deps.events.get(principal.tenant, id);
      if (!event || event.deleted || restrictedFrom(event, principal)) throw notFound('event');
      return presentEvent(event);
    },
  );

  app.get(
    '/v1/tenants/:tenant/memories/:id',
    {
      config: { action: 'memory.read' },
      schema: {
        summary: 'Read one memory (for a purpose the read policy allows; the duty of the reader\'s role by default)',
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const { purpose } = parseOrThrow(ReadQuerySchema, request.query);
      const principal = principalOf(request);
      const access = await requireReadAccess(deps, principal, purpose, 'memory');
      const memory = await deps.memories.get(principal.tenant, id);
      if (!memory || HIDDEN_STATUSES.has(memory.status) || restrictedFrom(memory, principal)) throw notFound('memory');
      if (UNSERVED_STATUSES.has(memory.status) && !principal.roles.some((r) => GOVERNING_ROLES.has(r))) throw notFound('memory');
      if (!access.sensitivities.includes(memory.policy.sensitivity)) {
        await deps.audit.append({
          tenant: principal.tenant,
          actor: principal.id,
          action: 'read.refused',
          target: memory._id,
          outcome: 'refused',
          details: { what: 'memory', purpose: access.purpose, policyId: access.policy.id, policyVersion: access.policy.version },
        });
        throw new DomainError(ErrorType.PolicyDenied, `purpose: the read policy does not allow this record to be read for "${access.purpose}"`, 'purpose');
      }
      return presentMemory(memory);
    },
  );
}
