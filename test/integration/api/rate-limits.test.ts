import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';

interface ErrorBody {
  error: { code: string; message: string };
}

function expectRefused(response: LightMyRequestResponse, budget: RegExp): void {
  expect(response.statusCode, response.body).toBe(429);
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  const body = response.json<ErrorBody>();
  expect(body.error.code).toBe('RateLimited');
  expect(body.error.message).toMatch(budget);
}

/** Budgets small enough to spend in a test; each counts requests per minute. */
describe('a caller that spends its request budget is told to retry later', () => {
  let app: TestApp;
  const tenant = uniqueTenant();
  const other = uniqueTenant();
  beforeAll(async () => {
    app = await startTestApp({
      config: {
        LETHE_RATE_LIMIT_PER_PRINCIPAL: '3',
        LETHE_RATE_LIMIT_PER_TENANT: '5',
        LETHE_RATE_LIMIT_PER_ADDRESS: '4',
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const listHolds = (t: string, token: string) =>
    app.request({ method: 'GET', url: `/v1/tenants/${t}/legal-holds`, token });

  it('refuses a principal past its budget with 429 and Retry-After, then its tenant past the tenant budget', async () => {
    const first = await app.token(tenant, ['legal']);
    for (let i = 0; i < 3; i++) expect((await listHolds(tenant, first)).statusCode).toBe(200);
    expectRefused(await listHolds(tenant, first), /this principal's 3 requests per minute/);

    // Another principal of the tenant has a budget of its own, but the tenant's is shared: 3 + 2 = 5.
    const second = await app.token(tenant, ['legal']);
    for (let i = 0; i < 2; i++) expect((await listHolds(tenant, second)).statusCode).toBe(200);
    expectRefused(await listHolds(tenant, second), /this tenant's 5 requests per minute/);

    // Another tenant is not affected.
    expect((await listHolds(other, await app.token(other, ['legal']))).statusCode).toBe(200);
  });

  it('counts unauthenticated calls by address, once each, refused tokens included, then refuses that address', async () => {
    const forged = `${await app.token(other, ['legal'])}x`;
    expect((await app.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await app.request({ method: 'GET', url: `/v1/tenants/${other}/legal-holds` })).statusCode).toBe(401);
    expect((await listHolds(other, forged)).statusCode).toBe(401);
    expect((await listHolds(other, forged)).statusCode).toBe(401);
    expectRefused(await app.request({ method: 'GET', url: '/healthz' }), /this address's unauthenticated 4 requests/);
    expectRefused(await listHolds(other, forged), /this address's unauthenticated/);
    expectRefused(
      await app.request({ method: 'GET', url: '/v1/tenants/NOT%20A%20TENANT/legal-holds', token: forged }),
      /this address's unauthenticated/,
    );
    // A principal behind the same address (a gateway, another agent on the host) is judged by its own token.
    const honest = uniqueTenant();
    expect((await listHolds(honest, await app.token(honest, ['legal']))).statusCode).toBe(200);
  });
});
