import type { FastifyInstance } from 'fastify';
import { cachedReadiness, checkReadiness, type DependencyProbe } from '../../../src/observability/readiness.js';
import type { RetentionScheduler } from '../../../src/temporal/retention-schedule.js';
import { errorResponses, tenantParams } from './route-schemas.js';

/**
 * The balancer's probe: ready or not, nothing else. Unauthenticated, so it names no host and opens no mail session,
 * and its answer is cached for a few seconds (see `cachedReadiness`).
 */
export function registerPublicReadiness(app: FastifyInstance, probes: readonly DependencyProbe[]): void {
  const ready = cachedReadiness(probes);
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Whether the API can serve (for load balancers): 200 or 503',
        response: {
          200: { type: 'object', properties: { ready: { type: 'boolean' } } },
          503: { type: 'object', properties: { ready: { type: 'boolean' } } },
        },
      },
    },
    async (_request, reply) => {
      const ok = await ready();
      return reply.code(ok ? 200 : 503).send({ ready: ok });
    },
  );
}

/**
 * The operators' readiness: every dependency with its latency and error (which names hosts), and whether every
 * registered tenant has its retention schedule (a walk of all schedules). Admin only, and never cached.
 */
export function registerOperatorReadiness(
  app: FastifyInstance,
  deps: { probes: readonly DependencyProbe[]; retentionScheduler?: Pick<RetentionScheduler, 'status'> },
): void {
  app.get(
    '/v1/tenants/:tenant/readiness',
    {
      config: { action: 'readiness.read', reads: 'none' },
      schema: {
        summary: 'Every dependency and the retention schedules, in detail (operators: the admin role)',
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (_request, reply) => {
      const report = await checkReadiness(deps.probes);
      // Informational: a tenant without its hourly sweep is not expiring records, but the API still serves.
      const retentionSchedules = deps.retentionScheduler
        ? await deps.retentionScheduler.status().catch(() => ({ error: 'unavailable' }))
        : undefined;
      return reply
        .code(report.ready ? 200 : 503)
        .send({ ...report, ...(retentionSchedules ? { retentionSchedules } : {}) });
    },
  );
}
