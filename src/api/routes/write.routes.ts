import type { FastifyInstance } from 'fastify';
import type { WriteGateway } from '../../temporal/write-gateway.js';
import {
  EventInputSchema,
  MemoryInputSchema,
  WriteBatchSchema,
  type WriteBatch,
} from '../../ingestion/write-schemas.js';
import { parseOrThrow } from '../../shared/validation.js';
import { DomainError } from '../../shared/errors.js';
import { principalOf } from '../authenticate.js';
import { roleAllows } from '../../governance/auth/permissions.js';
import { disclosedRefusal } from '../../ingestion/refusal-disclosure.js';
import { tenantParams, errorResponses } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import type { WriteQuota } from '../../ingestion/write-quota.js';
import { toApiError, type WorkflowCallContext } from '../workflow-errors.js';

/** A write's workflow is new each time (its id is its stage's): it is never found finished or already started. */
const WRITE_CONTEXT: WorkflowCallContext = { field: 'batch', finished: 'batch: already written' };

/**
 * Writes: validated here, checked against the tenant's quotas, then staged and carried by the ingestion workflow;
 * the answer waits for it.
 */
export function registerWriteRoutes(app: FastifyInstance, deps: { writes: WriteGateway; quota: WriteQuota }): void {
  const submit = async (principal: ReturnType<typeof principalOf>, batch: WriteBatch) => {
    const grant = await deps.quota.admit(principal.tenant, batch);
    const result = await deps.writes.submit(principal, batch).catch(async (error: unknown) => {
      await grant.nothingStored();
      throw toApiError(error, WRITE_CONTEXT);
    });
    if (result.refused) await grant.nothingStored();
    else await grant.stored(result);
    if (result.refused) {
      const seen = disclosedRefusal(result.refused, roleAllows(principal.roles, 'erasure.read'));
      throw new DomainError(seen.type, seen.message, seen.field);
    }
    return result;
  };

  app.post(
    '/v1/tenants/:tenant/events',
    {
      config: { action: 'event.ingest', reads: 'ids' },
      schema: {
        summary: 'Ingest one event',
        params: tenantParams,
        body: jsonSchemaOf(EventInputSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const event = parseOrThrow(EventInputSchema, request.body);
      const result = await submit(principalOf(request), { events: [event], memories: [] });
      const outcome = result.events[0]!;
      return reply.code(outcome.outcome === 'duplicate' ? 200 : 201).send(outcome);
    },
  );

  app.post(
    '/v1/tenants/:tenant/memories',
    {
      config: { action: 'memory.write', reads: 'ids' },
      schema: {
        summary: 'Write one memory',
        params: tenantParams,
        body: jsonSchemaOf(MemoryInputSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const memory = parseOrThrow(MemoryInputSchema, request.body);
      const result = await submit(principalOf(request), { events: [], memories: [memory] });
      return reply.code(201).send(result.memories[0]);
    },
  );

  app.post(
    '/v1/tenants/:tenant/batches',
    {
      config: { action: 'memory.write', reads: 'ids' },
      schema: {
        summary: 'Ingest a batch of events and memories in one workflow (all or nothing)',
        params: tenantParams,
        body: jsonSchemaOf(WriteBatchSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const batch = parseOrThrow(WriteBatchSchema, request.body);
      const result = await submit(principalOf(request), batch);
      return reply.code(201).send({ events: result.events, memories: result.memories, indexed: result.indexed });
    },
  );
}
