import type { FastifyInstance } from 'fastify';
import { SearchRequestSchema, type SearchService } from '../../retrieval/search-service.js';
import { parseOrThrow } from '../../shared/validation.js';
import { principalOf } from '../authenticate.js';
import { presentMemory } from './read.routes.js';
import { errorResponses, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';

export function registerSearchRoutes(app: FastifyInstance, deps: { search: SearchService }): void {
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
      const results = await deps.search.search(principalOf(request).tenant, query);
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
