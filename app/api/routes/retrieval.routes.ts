import type { Metrics } from '../../../src/observability/metrics.port.js';
import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import { RetrieveRequestSchema, type RetrievalService } from '../../../src/retrieval/retrieval-service.js';
import type { ExposureStore } from '../../../src/retrieval/exposure-store.js';
import { intentOf } from '../../../src/governance/read/reader.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { principalOf } from '../authenticate.js';
import { presentMemory } from '../presenters.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { requireReader, type ReadingDeps } from './read-access.js';
import { decodeCursor, nextCursor, pageQueryProperties } from './pagination.js';

const ExposureReportSchema = z.strictObject({
  /** The ids of this retrieval's items that the agent put into a prompt. */
  memoryIds: z.array(z.string().min(1).max(256)).min(1).max(100),
});

/** Governed retrieval for an agent's context, and the exposure trace of what reached a prompt. */
export function registerRetrievalRoutes(
  app: FastifyInstance,
  deps: ReadingDeps & {
    retrieval: RetrievalService;
    exposures: ExposureStore;
    metrics?: Pick<Metrics, 'taintedServed'>;
  },
): void {
  app.post(
    '/v1/tenants/:tenant/retrieve',
    {
      config: { action: 'memory.retrieve', reads: 'records' },
      schema: {
        summary: 'Admissible context for this principal, purpose, intent and time, packed within a token budget',
        params: tenantParams,
        body: jsonSchemaOf(RetrieveRequestSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const query = parseOrThrow(RetrieveRequestSchema, request.body);
      const principal = principalOf(request);
      const reader = await requireReader(
        deps,
        principal,
        { ...(query.purpose ? { purpose: query.purpose } : {}), ...intentOf(query) },
        'retrieve',
      );
      const result = await deps.retrieval.retrieve(principal.tenant, query, reader);
      if (result.counts.tainted > 0) deps.metrics?.taintedServed(result.counts.tainted);
      return {
        retrievalId: result.retrievalId,
        items: result.items.map((i) =>
          presentMemory(i.memory, {
            score: i.score,
            tokens: i.tokens,
            ...(i.disputes ? { disputes: i.disputes } : {}),
          }),
        ),
        counts: result.counts,
        taintedOnly: result.taintedOnly,
        short: result.short,
        budget: result.budget,
        policy: {
          read: reader.policies.read,
          scope: { ...reader.policies.scope, rules: reader.grants.map((g) => ({ purpose: g.purpose, rule: g.rule })) },
        },
      };
    },
  );

  app.post(
    '/v1/tenants/:tenant/retrievals/:id/exposures',
    {
      config: { action: 'exposure.report', reads: 'ids' },
      schema: {
        summary: "Report which of a retrieval's memories were put into a prompt",
        params: tenantIdParams,
        body: jsonSchemaOf(ExposureReportSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const body = parseOrThrow(ExposureReportSchema, request.body);
      const retrieval = await deps.exposures.getRetrieval(principal.tenant, id);
      if (!retrieval) throw new DomainError(ErrorType.NotFound, 'retrieval: not found', 'id');
      if (retrieval.principal !== principal.id) {
        throw new DomainError(ErrorType.Forbidden, 'retrieval: reported only by the principal that retrieved', 'id');
      }
      const unknown = await deps.exposures.recordExposures(principal.tenant, id, body.memoryIds, new Date());
      if (unknown.length > 0) {
        const index = body.memoryIds.indexOf(unknown[0]!);
        throw new DomainError(
          ErrorType.Validation,
          `memoryIds.${index}: not returned by this retrieval (nothing was recorded)`,
          `memoryIds.${index}`,
        );
      }
      return reply.code(201).send({ retrievalId: id, exposed: body.memoryIds.length });
    },
  );

  app.get(
    '/v1/tenants/:tenant/memories/:id/exposures',
    {
      config: { action: 'exposure.read', reads: 'ids' },
      schema: {
        summary: 'Which retrievals returned a memory and which prompts it reached, oldest first (a page at a time)',
        params: tenantIdParams,
        querystring: { type: 'object', additionalProperties: false, properties: pageQueryProperties },
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const { limit, cursor } = request.query as { limit: number; cursor?: string };
      const page = await deps.exposures.exposuresPage(principal.tenant, id, limit, decodeCursor(cursor)?.key ?? null);
      return {
        memoryId: id,
        nextCursor: nextCursor(page.next),
        retrievals: page.items.map((e) => ({
          retrievalId: e.retrievalId,
          principal: e.principal,
          retrievedAt: e.retrievedAt.toISOString(),
          exposedAt: e.exposedAt?.toISOString() ?? null,
        })),
      };
    },
  );
}
