import type { FastifyInstance } from 'fastify';
import { SearchRequestSchema, type SearchService } from '../../../src/retrieval/search-service.js';
import { intentOf } from '../../../src/governance/read/reader.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { principalOf } from '../authenticate.js';
import { presentMemory } from '../presenters.js';
import { errorResponses, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { requireReader, type ReadingDeps } from './read-access.js';

export function registerSearchRoutes(app: FastifyInstance, deps: ReadingDeps & { search: SearchService }): void {
  const body = jsonSchemaOf(SearchRequestSchema);
  app.post(
    '/v1/tenants/:tenant/search',
    {
      config: { action: 'memory.search', reads: 'records' },
      schema: {
        summary: "Hybrid (BM25 + vector) search under the reader's scope, purpose and the query's intent",
        params: tenantParams,
        body,
        response: errorResponses,
      },
    },
    async (request) => {
      const query = parseOrThrow(SearchRequestSchema, request.body);
      const principal = principalOf(request);
      const reader = await requireReader(
        deps,
        principal,
        { ...(query.purpose ? { purpose: query.purpose } : {}), ...intentOf(query) },
        'search',
      );
      const results = await deps.search.search(principal.tenant, query, reader);
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
