import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  NoopSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * Traces across API → workflow → activities (OpenTelemetry). Spans are named by route pattern, workflow and activity
 * type, and carry ids only; they go to an OTLP collector when one is configured, to an exporter a test passes in, or
 * nowhere (then `enabled` is false and no client, activity or HTTP span is made at all).
 */
export interface Tracing {
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** What workflow spans, made inside the sandbox, are handed to (through the worker's sink). */
  readonly processor: SpanProcessor;
  readonly resource: Resource;
  /** Sends what is still buffered, then stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  serviceName: string;
  /** An OTLP/HTTP traces endpoint (`…/v1/traces`). */
  otlpUrl?: string;
  /** Spans go here, one by one (tests read them back in process). */
  exporter?: SpanExporter;
}

let installed = false;

/**
 * Context follows async calls, so a span started for a request is the parent of what the request calls; and it
 * crosses into workflows and activities as W3C trace context in Temporal's headers.
 */
function installGlobals(): void {
  if (installed) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  installed = true;
}

export function createTracing(options: TracingOptions): Tracing {
  const resource = new Resource({ 'service.name': options.serviceName });
  const processor: SpanProcessor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : options.otlpUrl
      ? new BatchSpanProcessor(new OTLPTraceExporter({ url: options.otlpUrl }))
      : new NoopSpanProcessor();
  const enabled = !(processor instanceof NoopSpanProcessor);
  if (enabled) installGlobals();
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  return {
    enabled,
    tracer: enabled ? provider.getTracer('lethe') : trace.getTracer('lethe-off'),
    processor,
    resource,
    shutdown: () => provider.shutdown(),
  };
}
