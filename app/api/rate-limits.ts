import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { ApiLimits } from '../../src/config/config.js';
import { DomainError, ErrorType } from '../../src/shared/errors.js';
import type { Metrics } from '../../src/observability/metrics.port.js';

type RateMetrics = Pick<Metrics, 'rateLimited'>;

const MINUTE_MS = 60_000;

/** Which budget a refusal spent: each is counted apart, under its own key. */
type Budget = 'principal' | 'tenant' | 'address';

const WHOSE: Record<Budget, string> = {
  principal: "this principal's",
  tenant: "this tenant's",
  address: "this address's unauthenticated",
};

type Limiter = (
  request: FastifyRequest,
) => Promise<{ isAllowed: boolean; isExceeded?: boolean; ttlInSeconds?: number }>;

/** Spends the address budget of a call whose token was refused; throws 429 instead of 401 once it is spent. */
export type UnprovenCallBudget = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * Requests per minute, counted in this process's memory (`@fastify/rate-limit`'s local store): each API process
 * enforces the whole budget, so N processes behind a balancer allow up to N times it (see docs/rules.md).
 *
 * The address budget bounds callers that prove nothing about who they are. Public routes spend it before anything
 * else runs. A call that presents a token on a gated route is judged by its token first: many honest principals
 * may share one address (a gateway, a NAT, a host running several agents), and a flood of forged tokens from that
 * address must not lock them out. Judging costs one signature check; no store is read until the signature holds. A valid
 * token spends its principal's and its tenant's budgets instead; a refused one spends the address budget, and once
 * that is spent, refused tokens get 429 rather than 401.
 */
export async function registerAddressRateLimit(
  app: FastifyInstance,
  limits: ApiLimits['rate'],
  metrics?: RateMetrics,
): Promise<UnprovenCallBudget> {
  await app.register(rateLimit, { global: false, cache: 10_000 });
  const byAddress = limiterOf(app, limits.perAddress, (r) => `address:${r.ip}`);
  const judgedByToken = (request: FastifyRequest) =>
    request.routeOptions.config.action !== undefined && /^bearer /i.test(request.headers.authorization ?? '');
  app.addHook('onRequest', async (request, reply) => {
    if (judgedByToken(request)) return;
    await refuseWhenSpent(byAddress, 'address', limits.perAddress, request, reply, metrics);
  });
  return async (request, reply) => {
    // A call without a token spent the budget when it arrived; each call spends it once.
    if (judgedByToken(request)) await refuseWhenSpent(byAddress, 'address', limits.perAddress, request, reply, metrics);
  };
}

/** The principal's and the tenant's budgets; registered after authentication, so that the principal is known. */
export function registerPrincipalRateLimits(
  app: FastifyInstance,
  limits: ApiLimits['rate'],
  metrics?: RateMetrics,
): void {
  const byPrincipal = limiterOf(
    app,
    limits.perPrincipal,
    (r) => `principal:${r.principal?.tenant ?? ''}:${r.principal?.id ?? ''}`,
  );
  const byTenant = limiterOf(app, limits.perTenant, (r) => `tenant:${r.principal?.tenant ?? ''}`);
  app.addHook('onRequest', async (request, reply) => {
    if (!request.principal) return;
    await refuseWhenSpent(byPrincipal, 'principal', limits.perPrincipal, request, reply, metrics);
    await refuseWhenSpent(byTenant, 'tenant', limits.perTenant, request, reply, metrics);
  });
}

function limiterOf(app: FastifyInstance, max: number, key: (request: FastifyRequest) => string): Limiter {
  return app.createRateLimit({ max, timeWindow: MINUTE_MS, keyGenerator: key }) as Limiter;
}

async function refuseWhenSpent(
  limiter: Limiter,
  budget: Budget,
  max: number,
  request: FastifyRequest,
  reply: FastifyReply,
  metrics?: RateMetrics,
): Promise<void> {
  const state = await limiter(request);
  if (state.isAllowed || state.isExceeded !== true) return;
  metrics?.rateLimited(budget);
  const retryAfter = Math.max(1, state.ttlInSeconds ?? 60);
  reply.header('retry-after', String(retryAfter));
  throw new DomainError(
    ErrorType.RateLimited,
    `rate limit: ${WHOSE[budget]} ${max} requests per minute are spent; retry after ${retryAfter} s`,
  );
}
