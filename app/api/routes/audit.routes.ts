import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import { exportAuditJsonl } from '../../../src/governance/audit/audit-export.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantParams } from './route-schemas.js';

export function registerAuditRoutes(app: FastifyInstance, deps: { audit: AuditLog }): void {
  app.get(
    '/v1/tenants/:tenant/audit',
    {
      config: { action: 'audit.export', reads: 'ids' },
      schema: {
        summary: "Export the tenant's audit chain as JSONL, for offline verification",
        params: tenantParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { fromSeq: { type: 'integer', minimum: 1 }, toSeq: { type: 'integer', minimum: 1 } },
        },
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { fromSeq, toSeq } = request.query as { fromSeq?: number; toSeq?: number };
      const range = { ...(fromSeq ? { fromSeq } : {}), ...(toSeq ? { toSeq } : {}) };
      // Streamed: a tenant's chain grows without bound, and the export must not be held in memory whole.
      return reply
        .type('application/x-ndjson')
        .send(Readable.from(exportAuditJsonl(deps.audit, principalOf(request).tenant, range)));
    },
  );
}
