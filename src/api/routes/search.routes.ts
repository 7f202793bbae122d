import type { FastifyInstance } from 'fastify';
import { SearchRequestSchema, type SearchService } from '../../retrieval/search-service.js';
import { parseOrThrow } from '../../shared/validation.js';
import { principalOf } from '../authenticate.js';
import { presentMemory } from './read.routes.js';
import { errorResponses, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { requireReadAccess } from './read-access.js';
import type { PolicyDocument } from '../../governance/policy/evaluate.js';
import type { AuditLog } from '../../governance/audit/audit-log.port.js';

export function registerSearchRoutes(
  app: FastifyInstance,
  deps: { search: SearchService; readPolicy: PolicyDocument; audit: AuditLog },
): void {
  const body = jsonSchemaOf(SearchRequestSchema);
  app.post(
    '/v1/tenants/:tenant/search',
    {
      config: { action: 'memory.search' },
      schema: {
        summary: 'Hybrid (BM25 + vector) governed search',
        params: tenantParams,
        body,
        response: errorResponses,
      },
    },
    async (request) => {
      const query = parseOrThrow(SearchRequestSchema, request.body);
      const principal = principalOf(request);
      const access = await requireReadAccess(deps, principal, query.purpose, 'search');
      const results = await deps.search.search(principal.tenant, query, access.sensitivities);
      return {
        results: results.map((r) => ({
          score: r.score,
          memory: presentMemory(r.memory),
          ...(r.disputes ? { disputes: r.disputes } : {}),
        })),
      };
    },
  );
}
