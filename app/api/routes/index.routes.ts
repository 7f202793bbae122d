import type { FastifyInstance } from 'fastify';
import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import type { SearchIndex } from '../../../src/substrate/search/search-index.port.js';
import type { ReembedGateway } from '../../../src/temporal/reembed-gateway.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantParams } from './route-schemas.js';

/** Operations on a tenant's search index: re-embedding with the deployment's current embedder. */
export function registerIndexRoutes(
  app: FastifyInstance,
  deps: { reembeds: ReembedGateway; index: SearchIndex; audit: AuditLog },
): void {
  app.post(
    '/v1/tenants/:tenant/index/reconcile',
    {
      config: { action: 'index.reembed', reads: 'ids' },
      schema: {
        summary:
          "Delete the tenant's orphaned indices (behind neither alias, e.g. left by a re-embedding whose old-index delete failed); erasure reaches them until then",
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const dropped = await deps.index.dropOrphans(principal.tenant);
      if (dropped.length > 0) {
        await deps.audit.append({
          tenant: principal.tenant,
          actor: principal.id,
          action: 'index.reconciled',
          target: dropped.join(','),
          outcome: 'ok',
          details: { dropped: dropped.length },
        });
      }
      return { dropped };
    },
  );
  app.post(
    '/v1/tenants/:tenant/reembed',
    {
      config: { action: 'index.reembed', reads: 'ids' },
      schema: {
        summary: "Re-embed the tenant's index with the configured embedder (new index, atomic alias swap)",
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { status, started } = await deps.reembeds.start(principalOf(request).tenant);
      return reply.code(started ? 202 : 200).send({ ...status, started });
    },
  );
  app.get(
    '/v1/tenants/:tenant/reembed',
    {
      config: { action: 'index.reembed', reads: 'ids' },
      schema: {
        summary: "The tenant's last re-embedding: state and counts",
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (request) => deps.reembeds.status(principalOf(request).tenant),
  );
}
