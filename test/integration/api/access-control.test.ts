import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { recordRoutes, type RegisteredRoute } from '../../support/route-recorder.js';
import { ROLES, type Role } from '../../../src/governance/auth/principal.js';
import { ACTION_ROLES, type Action } from '../../../src/governance/auth/permissions.js';
import { buildApiServer, type TenantRoute } from '../../../app/api/server.js';
import { refusalCounts } from '../../../app/api/authenticate.js';

/**
 * Routes that answer without a token, and why each may. Every other route must declare `config.action`: the
 * authentication hook skips a route without one, so it would be served to anyone, for any tenant.
 */
const PUBLIC_ROUTES: Readonly<Record<string, string>> = {
  '/healthz': 'liveness probe for the process supervisor: answers {status: ok}, nothing else',
  '/readyz': 'readiness probe for the load balancer: ready or not (cached), no hosts, no tenant data',
  '/openapi.json': 'the API description generated from the route schemas: no tenant data',
  '/metrics':
    'Prometheus series for operators: fixed labels only (no tenant, principal or record id), behind LETHE_METRICS_TOKEN when set',
  '/console': 'redirects to /console/',
  '/console/*':
    "the consoles' static files (the built page, scripts, styles): no tenant data, which they fetch with a token",
};

const TENANT_SCOPE = '/v1/tenants/:tenant/';

/** What is wrong with the gating of a server's routes, one line per route; empty when every route is gated. */
function routeGateProblems(
  routes: readonly RegisteredRoute[],
  publicRoutes: Readonly<Record<string, string>>,
): string[] {
  const problems: string[] = [];
  for (const { method, url, action } of routes) {
    if (action === undefined) {
      if (!(url in publicRoutes))
        problems.push(`${method} ${url}: no config.action, so no authentication, role gate or tenant check`);
    } else if (!(action in ACTION_ROLES)) {
      problems.push(`${method} ${url}: action ${action} is not in the role table`);
    } else if (!url.startsWith(TENANT_SCOPE)) {
      problems.push(`${method} ${url}: gated, but the gate confines to the :tenant of the path and there is none`);
    }
  }
  return problems;
}

/**
 * A table generated from every route the API registers (recorded by an onRoute hook attached when the server is
 * created): every tenant-scoped endpoint × every role × own or foreign tenant, plus missing, forged and expired
 * tokens. Each refusal must be audited in the chain of the tenant named in the path.
 */
describe('who is asking: every endpoint refuses unauthenticated, wrong-role and cross-tenant calls, and audits it', () => {
  let app: TestApp;
  let registered: RegisteredRoute[];
  /** The gated routes, one per method (HEAD answers like its GET and is left out, as in the server's registry). */
  let gated: TenantRoute[];
  const home = uniqueTenant();
  const foreign = uniqueTenant();
  beforeAll(async () => {
    const recording = await recordRoutes(() => startTestApp());
    app = recording.built;
    registered = recording.routesOf(app.api);
    gated = registered
      .filter((r) => r.action !== undefined && r.method !== 'HEAD')
      .map((r) => ({
        method: r.method,
        url: r.url,
        action: r.action as Action,
        reads: r.reads as TenantRoute['reads'],
      }));
  });
  afterAll(async () => {
    await app?.close();
  });

  const urlFor = (route: TenantRoute, tenant: string) =>
    route.url
      .replace(':tenant', tenant)
      .replace(':id', 'mem_does-not-exist')
      .replace(/:(\w+)/g, 'x');
  const refusalsIn = async (tenant: string) => {
    let n = 0;
    for await (const entry of app.services.audit.entries(tenant)) if (entry.action === 'access.refused') n++;
    return n;
  };

  it('gives every registered route an action, except the public probes and the API description', () => {
    expect(registered.length).toBeGreaterThan(Object.keys(PUBLIC_ROUTES).length);
    expect(routeGateProblems(registered, PUBLIC_ROUTES)).toEqual([]);
    // The public list names routes that exist: an entry left behind by a removed route is not a free pass.
    expect(Object.keys(PUBLIC_ROUTES).filter((url) => !registered.some((r) => r.url === url))).toEqual([]);
    // The server's own registry, which the role tables below used to come from, lists the same routes.
    const key = (r: TenantRoute) => `${r.method} ${r.url} ${r.action}`;
    expect(app.api.tenantRoutes.map(key).sort()).toEqual(gated.map(key).sort());
    expect(gated.length).toBeGreaterThanOrEqual(7);
  });

  it('flags a route registered without an action, which the server would serve to anyone without a token', async () => {
    const recording = await recordRoutes(async () => {
      const leaky = await buildApiServer({
        log: app.runtime.log,
        probes: [],
        services: app.services,
        tokenKeys: { hs256Secret: app.runtime.config.tokens.hs256Secret! },
      });
      // Registered after the server was built, the way a forgotten route in a later plugin would be.
      leaky.get('/v1/tenants/:tenant/everything', async () => ({ leaked: true }));
      leaky.get(
        '/v1/tenants/:tenant/typo',
        { config: { action: 'memory.reed' as Action, reads: 'ids' } },
        async () => ({}),
      );
      leaky.get('/v1/stats', { config: { action: 'audit.export', reads: 'ids' } }, async () => ({}));
      // A gated route that does not say what it reads is refused when it is registered.
      expect(() =>
        leaky.get('/v1/tenants/:tenant/unsaid', { config: { action: 'memory.read' } }, async () => ({})),
      ).toThrow('must declare config.reads');
      return leaky;
    });
    const leaky = recording.built;
    try {
      expect(routeGateProblems(recording.routesOf(leaky), PUBLIC_ROUTES)).toEqual([
        'GET /v1/tenants/:tenant/everything: no config.action, so no authentication, role gate or tenant check',
        'HEAD /v1/tenants/:tenant/everything: no config.action, so no authentication, role gate or tenant check',
        'GET /v1/tenants/:tenant/typo: action memory.reed is not in the role table',
        'HEAD /v1/tenants/:tenant/typo: action memory.reed is not in the role table',
        'GET /v1/stats: gated, but the gate confines to the :tenant of the path and there is none',
        'HEAD /v1/stats: gated, but the gate confines to the :tenant of the path and there is none',
      ]);
      // What the check guards against: without an action the route answers a caller with no token at all.
      const anonymous = await leaky.inject({ method: 'GET', url: `/v1/tenants/${foreign}/everything` });
      expect(anonymous.statusCode).toBe(200);
    } finally {
      await leaky.close();
    }
  });

  /** A token signed with the server's secret, with the claims given (seconds since the epoch; null leaves one out). */
  const signed = (claims: { iat: number | null; exp: number | null; sub?: string | null; jti?: null }) => {
    let jwt = new SignJWT({ tenant: home, roles: [...ROLES] })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('lethe')
      .setAudience('lethe-api');
    if (claims.sub !== null) jwt = jwt.setSubject(claims.sub ?? 'mallory');
    if (claims.jti !== null) jwt = jwt.setJti(randomUUID());
    if (claims.iat !== null) jwt = jwt.setIssuedAt(claims.iat);
    if (claims.exp !== null) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(new TextEncoder().encode(app.runtime.config.tokens.hs256Secret!));
  };

  it('answers 401 without a token, with a forged, expired, endless, overlong, future-dated or unrevocable token, and writes nothing into the tenant it named', async () => {
    const before = await refusalsIn(home);
    const countedBefore = refusalCounts.unauthenticated;
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ tenant: home, roles: [...ROLES] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('mallory')
      .setIssuer('lethe')
      .setAudience('lethe-api')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('not-the-server-secret-but-long-enough-to-sign'));
    const bad = [
      forged,
      await signed({ iat: now - 120, exp: now - 10 }),
      // Signed with the real secret, yet never expiring, living longer than the maximum, dated in the future, or
      // naming no principal: each is refused.
      await signed({ iat: now, exp: null }),
      await signed({ iat: null, exp: now + 600 }),
      await signed({ iat: now, exp: now + app.runtime.config.tokens.maxTtlSeconds + 60 }),
      await signed({ iat: now + 3600, exp: now + 3700 }),
      await signed({ iat: now, exp: now + 600, sub: null }),
      // Without a jti it could never be revoked.
      await signed({ iat: now, exp: now + 600, jti: null }),
      'not.a.jwt',
    ];
    // Positive control: the same claims within the limits are accepted.
    const good = await signed({ iat: now, exp: now + 600 });
    expect((await app.request({ method: 'GET', url: `/v1/tenants/${home}/audit`, token: good })).statusCode).toBe(200);
    let sent = 0;
    for (const route of gated) {
      for (const token of [undefined, ...bad]) {
        const response = await app.request({
          method: route.method as 'GET',
          url: urlFor(route, home),
          ...(token ? { token } : {}),
          payload: route.method === 'GET' ? undefined : {},
        });
        expect(response.statusCode, `${route.method} ${route.url} token=${token ? 'bad' : 'none'}`).toBe(401);
        expect(response.json<{ error: { code: string } }>().error.code).toBe('Unauthenticated');
        sent++;
      }
    }
    // Anyone can send these: they are counted and logged, and the tenant's audit chain does not grow.
    expect(await refusalsIn(home)).toBe(before);
    expect(refusalCounts.unauthenticated - countedBefore).toBe(sent);
  });

  it('answers 403 to every role the action does not allow, and lets every allowed role past the gate', async () => {
    const before = await refusalsIn(home);
    let refused = 0;
    for (const route of gated) {
      const allowed: readonly Role[] = ACTION_ROLES[route.action];
      for (const role of ROLES) {
        const response = await app.request({
          method: route.method as 'GET',
          url: urlFor(route, home),
          token: await app.token(home, [role]),
          payload: route.method === 'GET' ? undefined : {},
        });
        const where = `${route.method} ${route.url} as ${role}`;
        if (allowed.includes(role)) {
          expect([401, 403], where).not.toContain(response.statusCode);
        } else {
          expect(response.statusCode, where).toBe(403);
          refused++;
        }
      }
    }
    expect(refused).toBeGreaterThan(0);
    expect(await refusalsIn(home)).toBe(before + refused);
  });

  it("answers 403 to a principal of another tenant, whatever its roles, and audits it in its own tenant's chain, not the one it tried", async () => {
    const before = await refusalsIn(foreign);
    const ownBefore = await refusalsIn(home);
    const intruder = await app.token(home, [...ROLES], 'intruder');
    for (const route of gated) {
      const response = await app.request({
        method: route.method as 'GET',
        url: urlFor(route, foreign),
        token: intruder,
        payload: route.method === 'GET' ? undefined : {},
      });
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(403);
    }
    expect(await refusalsIn(foreign)).toBe(before);
    expect(await refusalsIn(home)).toBe(ownBefore + gated.length);
    const last = [];
    for await (const entry of app.services.audit.entries(home))
      if (entry.action === 'access.refused' && entry.actor === 'intruder') last.push(entry);
    expect(last.at(-1)?.details).toMatchObject({ requestedTenant: foreign, status: 403 });
  });
});
