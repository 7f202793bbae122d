import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WriteGateway } from '../../../src/temporal/write-gateway.js';
import {
  EventInputSchema,
  MemoryInputSchema,
  WriteBatchSchema,
  type WriteBatch,
} from '../../../src/ingestion/write-schemas.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { DomainError, validationError } from '../../../src/shared/errors.js';
import { principalOf } from '../authenticate.js';
import { roleAllows } from '../../../src/governance/auth/permissions.js';
import { disclosedRefusal } from '../../../src/ingestion/refusal-disclosure.js';
import { tenantParams, errorResponses } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import type { WriteQuota } from '../../../src/ingestion/write-quota.js';
import { toApiError, type WorkflowCallContext } from '../workflow-errors.js';

/**
 * A write's workflow is new each time (its id is its stage's), or, under an idempotency key, the gateway answers a
 * repeat itself: it is never found finished or already started here.
 */
const WRITE_CONTEXT: WorkflowCallContext = { field: 'batch', finished: 'batch: already written' };

/** Printable ASCII without spaces, as clients generate them (a UUID, a hash); long enough for either. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;

/** Declared for the OpenAPI document; checked by `idempotencyKeyOf`, which names the header when it refuses one. */
const idempotencyHeaders = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description:
        'One write per key and principal: a repeat answers the first write and writes nothing; a different write under a used key is refused (409)',
    },
  },
} as const;

/** The request's `Idempotency-Key`, if it sent one; a malformed key is refused naming the header. */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))
    throw validationError('Idempotency-Key', 'one key of 1 to 128 printable ASCII characters, without spaces');
  return key;
}

/**
 * Writes: validated here, checked against the tenant's quotas, then staged and carried by the ingestion workflow;
 * the answer waits for it.
 */
export function registerWriteRoutes(app: FastifyInstance, deps: { writes: WriteGateway; quota: WriteQuota }): void {
  const submit = async (request: FastifyRequest, batch: WriteBatch) => {
    const principal = principalOf(request);
    const key = idempotencyKeyOf(request);
    const grant = await deps.quota.admit(principal.tenant, batch);
    const result = await deps.writes.submit(principal, batch, key).catch(async (error: unknown) => {
      await grant.nothingStored();
      throw toApiError(error, WRITE_CONTEXT);
    });
    // A repeat under an idempotency key stored nothing: its records were counted by the write it repeats.
    if (result.refused || result.repeated) await grant.nothingStored();
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
        headers: idempotencyHeaders,
        body: jsonSchemaOf(EventInputSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const event = parseOrThrow(EventInputSchema, request.body);
      const result = await submit(request, { events: [event], memories: [] });
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
        headers: idempotencyHeaders,
        body: jsonSchemaOf(MemoryInputSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const memory = parseOrThrow(MemoryInputSchema, request.body);
      const result = await submit(request, { events: [], memories: [memory] });
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
        headers: idempotencyHeaders,
        body: jsonSchemaOf(WriteBatchSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const batch = parseOrThrow(WriteBatchSchema, request.body);
      const result = await submit(request, batch);
      return reply.code(201).send({ events: result.events, memories: result.memories, indexed: result.indexed });
    },
  );
}
