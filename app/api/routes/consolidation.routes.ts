import type { FastifyInstance } from 'fastify';
import type { ConsolidationGateway } from '../../../src/temporal/consolidation-gateway.js';
import { ConsolidationRequestSchema } from '../../../src/ingestion/write-schemas.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import { principalOf } from '../authenticate.js';
import { tenantParams, errorResponses } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';

/**
 * Consolidation on demand (the end of a session or task, a detected conflict, a policy or model change): the run
 * builds views of the caller's memories in a namespace and answers ids, statuses and counts, never content. A run
 * longer than `LETHE_CONSOLIDATION_WAIT_MS` is answered 202 while it goes on.
 */
export function registerConsolidationRoutes(
  app: FastifyInstance,
  deps: { consolidations: ConsolidationGateway },
): void {
  app.post(
    '/v1/tenants/:tenant/consolidations',
    {
      config: { action: 'memory.consolidate', reads: 'ids' },
      schema: {
        summary: 'Consolidate a namespace’s memories into views, through admission like any write',
        params: tenantParams,
        body: jsonSchemaOf(ConsolidationRequestSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const body = parseOrThrow(ConsolidationRequestSchema, request.body);
      const principal = principalOf(request);
      if (body.scope === 'tenant' && !principal.roles.includes('admin'))
        throw new DomainError(
          ErrorType.Forbidden,
          'scope: only an admin consolidates the tenant’s shared memories',
          'scope',
        );
      const answer = await deps.consolidations.run(principal, body);
      // Still going past the wait: 202, and the same call again joins the run.
      return reply.code(answer.state === 'completed' ? 200 : 202).send(answer);
    },
  );
}
