import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from '../../src/observability/logger.js';
import type { DependencyProbe } from '../../src/observability/readiness.js';
import { registerErrorHandling } from './errors.js';
import { registerHttpTracing } from './http-tracing.js';
import type { Tracing } from '../../src/observability/tracing.js';
import type { Services } from '../services.js';
import type { Action } from '../../src/governance/auth/permissions.js';
import { registerAuthentication, type RouteReads } from './authenticate.js';
import { registerAccessRoutes } from './routes/access.routes.js';
import { registerRectificationRoutes } from './routes/rectification.routes.js';
import type { TokenKeys, TokenLimits } from '../../src/governance/auth/tokens.js';
import { refuseControlCharacters } from './control-characters.js';
import { registerWriteRoutes } from './routes/write.routes.js';
import { registerConsolidationRoutes } from './routes/consolidation.routes.js';
import { registerReadRoutes } from './routes/read.routes.js';
import { registerSearchRoutes } from './routes/search.routes.js';
import { registerRetrievalRoutes } from './routes/retrieval.routes.js';
import { registerAuditRoutes } from './routes/audit.routes.js';
import { registerAuditTileRoutes } from './routes/audit-tiles.routes.js';
import { registerErasureRoutes } from './routes/erasure.routes.js';
import { registerHoldRoutes } from './routes/hold.routes.js';
import { registerCertificateRoutes } from './routes/certificate.routes.js';
import { registerReviewRoutes } from './routes/review.routes.js';
import { registerIndexRoutes } from './routes/index.routes.js';
import { registerRightsRoutes } from './routes/rights.routes.js';
import { registerRestrictionRoutes } from './routes/restriction.routes.js';
import { registerSubjectRequestRoutes } from './routes/subject-requests.routes.js';
import { registerConsole } from './console-static.js';
import { registerOperatorReadiness, registerPublicReadiness } from './routes/readiness.routes.js';
import { guardPresentedContent } from './presenters.js';
import { defaultApiLimits, type ApiLimits } from '../../src/config/config.js';
import { registerAddressRateLimit, registerPrincipalRateLimits } from './rate-limits.js';
import { registerMetrics } from './metrics.routes.js';
import { limitConnectionsPerAddress } from './connection-limit.js';

/** A tenant-scoped route and the action its role gate checks (the auth test table is generated from these). */
export interface TenantRoute {
  method: string;
  url: string;
  action: Action;
  reads: RouteReads;
}

declare module 'fastify' {
  interface FastifyInstance {
    tenantRoutes: TenantRoute[];
  }
}

export interface ApiDependencies {
  log: Logger;
  probes: readonly DependencyProbe[];
  /** Tenant-scoped routes are registered only when the services are given (health endpoints always). */
  services?: Services;
  /** What bearer tokens are verified with (see `loadTokenKeys`). */
  tokenKeys?: TokenKeys;
  /** Bearer tokens' longest lifetime (the configuration's by default). */
  tokenLimits?: TokenLimits;
  /** The built consoles (default: `dist/console`). */
  consoleDir?: string;
  /** Rate limits, quotas and server timeouts (the configuration's defaults when not given). */
  limits?: ApiLimits;
  /** The bearer token `/metrics` requires (none: served to whoever reaches the port). */
  metricsToken?: string;
  /** Spans per request, continued by the workflows they start (off when absent or not enabled). */
  tracing?: Tracing;
}

/** Builds the HTTP API; routes declare JSON schemas, from which the OpenAPI document is generated. */
export async function buildApiServer(deps: ApiDependencies): Promise<FastifyInstance> {
  const limits = deps.limits ?? defaultApiLimits();
  const { http } = limits;
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: http.bodyLimitBytes,
    // A client that holds a socket idle, or sends its request slowly (slow loris), is cut off: requests are checked
    // every second rather than Node's default 30 s, so a short request timeout is kept. The headers timeout runs from
    // a request's first byte, not over a kept-alive connection's idle wait, so it need not exceed the keep-alive.
    connectionTimeout: http.connectionTimeoutMs,
    requestTimeout: http.requestTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    http: {
      headersTimeout: http.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, http.requestTimeoutMs),
    },
    ajv: { customOptions: { removeAdditional: false, allErrors: false } },
  });
  limitConnectionsPerAddress(app.server, http.connectionsPerAddress, (refused) =>
    app.log.warn({ refused, perAddress: http.connectionsPerAddress }, 'connections past the per-address cap closed'),
  );
  await app.register(swagger, {
    openapi: {
      info: { title: 'Lethe API', version: '0.1.0' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
  });
  registerErrorHandling(app);
  if (deps.tracing) registerHttpTracing(app, deps.tracing);
  const metrics = deps.services?.metrics;
  if (metrics) registerMetrics(app, metrics, deps.metricsToken);
  const unproven = await registerAddressRateLimit(app, limits.rate, metrics);
  refuseControlCharacters(app);
  guardPresentedContent(app);
  const tenantRoutes: TenantRoute[] = [];
  app.addHook('onRoute', (route) => {
    const { action, reads } = (route.config ?? {}) as { action?: Action; reads?: RouteReads };
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!action) return;
    // A route that reads the tenant's data says what it hands back, so that the read red team and the route
    // registry test know which routes must present records through the read judge.
    if (!reads) throw new Error(`${route.url}: a tenant route must declare config.reads`);
    for (const method of methods) if (method !== 'HEAD') tenantRoutes.push({ method, url: route.url, action, reads });
  });
  app.decorate('tenantRoutes', tenantRoutes);

  app.get(
    '/healthz',
    { schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } } } } } },
    async () => ({ status: 'ok' }),
  );

  registerPublicReadiness(app, deps.probes);

  if (deps.services && deps.tokenKeys) {
    const { services } = deps;
    registerAuthentication(app, {
      tokenKeys: deps.tokenKeys,
      revocations: services.revokedTokens,
      unproven,
      ...(deps.tokenLimits ? { tokenLimits: deps.tokenLimits } : {}),
      audit: services.audit,
      metrics: services.metrics,
    });
    registerPrincipalRateLimits(app, limits.rate, services.metrics);
    registerWriteRoutes(app, { writes: services.workflows.writes, quota: services.writeQuota });
    registerConsolidationRoutes(app, { consolidations: services.workflows.consolidations });
    const reading = {
      rules: services.rules,
      audit: services.audit,
      restrictions: services.restrictions,
    };
    registerReadRoutes(app, {
      events: services.events,
      memories: services.memories,
      trace: services.trace,
      ...reading,
    });
    registerSearchRoutes(app, { search: services.search, ...reading });
    registerRetrievalRoutes(app, {
      retrieval: services.retrieval,
      exposures: services.exposures,
      metrics: services.metrics,
      ...reading,
    });
    registerAuditRoutes(app, {
      audit: services.audit,
      tree: services.logTree,
      checkpoints: services.checkpoints,
      witnessKeys: services.witnessKeys,
    });
    registerAuditTileRoutes(app, { tiles: services.logTiles, checkpoints: services.checkpoints });
    registerIndexRoutes(app, { reembeds: services.workflows.reembeds, index: services.index, audit: services.audit });
    registerOperatorReadiness(app, { probes: deps.probes, retentionScheduler: services.retentionScheduler });
    registerErasureRoutes(app, {
      erasures: services.workflows.erasure,
      requests: services.erasureRequests,
      kekEpochs: () => services.cipher.vault.keks.epochs(),
    });
    registerRightsRoutes(app, {
      events: services.events,
      memories: services.memories,
      lineage: services.lineage,
      holds: services.holds,
      fingerprints: services.fingerprints,
      macs: services.tenantMacs,
      readersOf: (tenant, ids) => services.exposures.readersOf(tenant, ids),
      receipts: services.receipts,
    });
    registerRestrictionRoutes(app, {
      restrictions: services.restrictions,
      lineage: {
        events: services.events,
        memories: services.memories,
        lineage: services.lineage,
        macs: services.tenantMacs,
      },
      audit: services.audit,
      policy: services.rules.restriction,
      fingerprints: services.fingerprints,
      macs: services.tenantMacs,
    });
    registerAccessRoutes(app, {
      accesses: services.workflows.access,
      audit: services.audit,
      policy: services.rules.access,
    });
    registerRectificationRoutes(app, {
      rectifications: services.workflows.rectification,
      store: services.rectifications,
      audit: services.audit,
      policy: services.rules.rectification,
      decisions: services.workflows.decisions,
      fingerprints: services.fingerprints,
    });
    registerSubjectRequestRoutes(app, {
      erasures: services.erasureRequests,
      accesses: services.workflows.access,
      rectifications: services.workflows.rectification,
      restrictions: services.restrictions,
      memories: services.memories,
      fingerprints: services.fingerprints,
      policies: {
        access: services.rules.access,
        rectification: services.rules.rectification,
        restriction: services.rules.restriction,
      },
    });
    registerHoldRoutes(app, {
      holds: services.holds,
      audit: services.audit,
      policy: services.rules.hold,
      erasures: services.workflows.erasure,
      requests: services.erasureRequests,
    });
    registerCertificateRoutes(app, { certificates: services.certificates, publicKeyPem: services.publicKeyPem });
    registerReviewRoutes(app, {
      memories: services.memories,
      reviews: services.reviews,
      disputes: services.disputes,
      decisions: services.workflows.decisions,
      fingerprints: services.fingerprints,
      ...reading,
    });
  }

  registerConsole(app, deps.consoleDir);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
