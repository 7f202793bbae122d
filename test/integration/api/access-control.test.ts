import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { ROLES, type Role } from '../../../src/governance/auth/principal.js';
import { ACTION_ROLES } from '../../../src/governance/auth/permissions.js';
import type { TenantRoute } from '../../../src/api/server.js';

/**
 * A table generated from the API's own route registry: every tenant-scoped endpoint × every role × own or
 * foreign tenant, plus missing, forged and expired tokens. Each refusal must be audited in the chain of
 * the tenant named in the path.
 */
describe('who is asking: every endpoint refuses unauthenticated, wrong-role and cross-tenant calls, and audits it', () => {
  let app: TestApp;
  const home = uniqueTenant();
  const foreign = uniqueTenant();
  beforeAll(async () => {
    app = await startTestApp();
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

  it('covers every tenant-scoped route', () => {
    expect(app.api.tenantRoutes.length).toBeGreaterThanOrEqual(7);
  });

  it('answers 401 without a token, with a forged token and with an expired token', async () => {
    const before = await refusalsIn(home);
    const forged = await new SignJWT({ tenant: home, roles: [...ROLES] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('mallory')
      .setIssuer('lethe')
      .setAudience('lethe-api')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('not-the-server-secret-but-long-enough-to-sign'));
    const expired = await app.token(home, [...ROLES], 'late', -10);
    let sent = 0;
    for (const route of app.api.tenantRoutes) {
      for (const token of [undefined, forged, expired, 'not.a.jwt']) {
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
    expect(await refusalsIn(home)).toBe(before + sent);
  });

  it('answers 403 to every role the action does not allow, and lets every allowed role past the gate', async () => {
    const before = await refusalsIn(home);
    let refused = 0;
    for (const route of app.api.tenantRoutes) {
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

  it('answers 403 to a principal of another tenant, whatever its roles, and audits it in the tenant it tried', async () => {
    const before = await refusalsIn(foreign);
    const intruder = await app.token(home, [...ROLES]);
    for (const route of app.api.tenantRoutes) {
      const response = await app.request({
        method: route.method as 'GET',
        url: urlFor(route, foreign),
        token: intruder,
        payload: route.method === 'GET' ? undefined : {},
      });
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(403);
    }
    expect(await refusalsIn(foreign)).toBe(before + app.api.tenantRoutes.length);
  });
});
