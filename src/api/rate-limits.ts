import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { ApiLimits } from '../config/config.js';
import { DomainError, ErrorType } from '../shared/errors.js';

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
  options?: { increment?: boolean },
) => Promise<{ isAllowed: boolean; isExceeded?: boolean; remaining?: number; ttlInSeconds?: number }>;

/**
 * Requests per minute, counted in this process's memory (`@fastify/rate-limit`'s local store): each API process
 * enforces the whole budget, so N processes behind a balancer allow up to N times it (see the README).
 *
 * The address budget bounds callers that prove nothing about who they are: public routes and calls whose token is
 * refused are counted against it, before authentication, and once it is spent every call from that address is
 * refused until the window turns. Authenticated calls never spend it: they spend their principal's and their
 * tenant's budgets, counted after authentication.
 */
export async function registerAddressRateLimit(app: FastifyInstance, limits: ApiLimits['rate']): Promise<void> {
  await app.register(rateLimit, { global: false, cache: 10_000 });
  const byAddress = limiterOf(app, limits.perAddress, (r) => `address:${r.ip}`);
  // A token on a gated route is judged by the authentication that follows: it spends the address budget only if
  // refused. Any other call spends it at once.
  const judgedLater = (request: FastifyRequest) =>
    request.routeOptions.config.action !== undefined && /^bearer /i.test(request.headers.authorization ?? '');
  app.addHook('onRequest', async (request, reply) => {
    await refuseWhenSpent(byAddress, 'address', limits.perAddress, request, reply, !judgedLater(request));
  });
  app.addHook('onError', async (request, _reply, error) => {
    if (error instanceof DomainError && error.type === ErrorType.Unauthenticated && judgedLater(request)) {
      await byAddress(request);
    }
  });
}

/** The principal's and the tenant's budgets; registered after authentication, so that the principal is known. */
export function registerPrincipalRateLimits(app: FastifyInstance, limits: ApiLimits['rate']): void {
  const byPrincipal = limiterOf(
    app,
    limits.perPrincipal,
    (r) => `principal:${r.principal?.tenant ?? ''}:${r.principal?.id ?? ''}`,
  );
  const byTenant = limiterOf(app, limits.perTenant, (r) => `tenant:${r.principal?.tenant ?? ''}`);
  app.addHook('onRequest', async (request, reply) => {
    if (!request.principal) return;
    await refuseWhenSpent(byPrincipal, 'principal', limits.perPrincipal, request, reply, true);
    await refuseWhenSpent(byTenant, 'tenant', limits.perTenant, request, reply, true);
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
  increment: boolean,
): Promise<void> {
  const state = await limiter(request, { increment });
  if (state.isAllowed) return;
  // A read (no increment) sees the calls made so far: none remains when they reach the budget.
  const spent = increment ? state.isExceeded === true : state.remaining === 0;
  if (!spent) return;
  const retryAfter = Math.max(1, state.ttlInSeconds ?? 60);
  reply.header('retry-after', String(retryAfter));
  throw new DomainError(
    ErrorType.RateLimited,
    `rate limit: ${WHOSE[budget]} ${max} requests per minute are spent; retry after ${retryAfter} s`,
  );
}
