import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Tracing } from '../../src/observability/tracing.js';

/**
 * A server span per request, named by method and route pattern (`POST /v1/tenants/:tenant/erasure-requests`), never by
 * the URL itself, which holds ids and query text. Everything the request calls (the Temporal client above all) runs
 * inside it, so a workflow the request starts continues its trace.
 */
export function registerHttpTracing(app: FastifyInstance, tracing: Tracing): void {
  if (!tracing.enabled) return;
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracing.tracer.startSpan(`${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'http.route': route },
    });
    spans.set(request, span);
    context.with(trace.setSpan(context.active(), span), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}
