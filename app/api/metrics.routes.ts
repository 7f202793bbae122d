import type { FastifyInstance } from 'fastify';
import type { PrometheusMetrics } from '../../src/observability/prometheus-metrics.js';
import { metricsAccessAllowed } from '../../src/observability/metrics-access.js';
import { DomainError, ErrorType } from '../../src/shared/errors.js';
import type { Action } from '../../src/governance/auth/permissions.js';

const ADMISSION: readonly Action[] = ['event.ingest', 'memory.write'];

/**
 * `GET /metrics` (Prometheus text), and the latency of every answered request by route template. A public route:
 * it spends the address budget like the other unauthenticated ones, which also bounds guessing at its token.
 */
export function registerMetrics(app: FastifyInstance, metrics: PrometheusMetrics, token: string | undefined): void {
  app.addHook('onResponse', async (request, reply) => {
    const seconds = reply.elapsedTime / 1000;
    // The template, never the path: a path holds tenant and record ids.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequest(route, request.method, reply.statusCode, seconds);
    const action = request.routeOptions.config.action;
    if (action && ADMISSION.includes(action)) metrics.admission(reply.statusCode, seconds);
    else if (action === 'memory.retrieve') metrics.retrieval(reply.statusCode, seconds);
  });

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!metricsAccessAllowed(token, request.headers.authorization)) {
      throw new DomainError(ErrorType.Unauthenticated, 'authorization: the metrics token is required', 'authorization');
    }
    const text = await metrics.render();
    return reply.type(metrics.contentType).send(text);
  });
}
