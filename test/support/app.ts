/**
 * An end-to-end fixture: the real API (in-process, through `inject`) over the real stores, with a worker
 * of the test's own on its own task queue. Indices get a 1 s soft-delete lease sync so erasure tests
 * need not wait 30 s; production keeps the default.
 */
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { createServices, type Services } from '../../app/services.js';
import type { Runtime } from '../../app/runtime.js';
import { buildApiServer } from '../../app/api/server.js';
import { mintToken } from '../../src/governance/auth/tokens.js';
import { loadTokenKeys } from '../../src/governance/auth/token-keys.js';
import type { Role } from '../../src/governance/auth/principal.js';
import { startWorker, testRuntime, uniqueId, type RunningWorker } from './harness.js';

export const TEST_INDEX_SETTINGS = { 'index.soft_deletes.retention_lease.sync_interval': '1s' };

export interface TestApp {
  runtime: Runtime;
  services: Services;
  api: FastifyInstance;
  worker: RunningWorker;
  /** A token of a principal of `tenant`; `purposes`: its `purposes` claim (absent: none, its roles' default). */
  token(tenant: string, roles: Role[], principal?: string, ttlSeconds?: number, purposes?: string[]): Promise<string>;
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Activity interceptors for the worker (e.g. a gate that holds an erasure at a step boundary). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** Configuration variables over the test defaults (e.g. another embedder, `LETHE_DERIVATION_AUDIT`). */
  config?: Record<string, string>;
  /** The bearer token `/metrics` requires (none by default). */
  metricsToken?: string;
  /** Where the process's spans go (tracing is off without one, as without an OTLP endpoint). */
  spanExporter?: SpanExporter;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const runtime = testRuntime(options.config, options.spanExporter ? { spanExporter: options.spanExporter } : {});
  const taskQueue = uniqueId('tq');
  // The API and the worker share one services instance here, so `/metrics` shows both sides' series.
  const services = createServices(runtime, {
    taskQueue,
    indexSettings: TEST_INDEX_SETTINGS,
    metrics: { erasureBacklog: true },
  });
  await services.ensureIndexes();
  const worker = await startWorker(runtime, taskQueue, services, options.activityInterceptors);
  const api = await buildApiServer({
    log: runtime.log,
    probes: runtime.probes,
    services,
    tokenKeys: loadTokenKeys(runtime.config.tokens),
    limits: runtime.config.limits,
    tracing: runtime.tracing,
    ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}),
  });
  return {
    runtime,
    services,
    api,
    worker,
    token: (tenant, roles, principal = uniqueId('p'), ttlSeconds = 600, purposes) =>
      mintToken(
        runtime.config.tokens.hs256Secret!,
        { id: principal, tenant, roles, ...(purposes ? { purposes } : {}) },
        ttlSeconds,
      ),
    request: ({ token, headers, ...options }) =>
      api.inject({ ...options, headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } }),
    async close() {
      await api.close();
      await worker.stop();
      await runtime.close();
    },
  };
}

/** A tenant id of the test's own (index-name safe). */
export function uniqueTenant(): string {
  return uniqueId('t');
}
