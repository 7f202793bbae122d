import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer } from '../../../app/api/server.js';
import { createLogger } from '../../../src/observability/logger.js';
import type { DependencyProbe, ReadinessReport } from '../../../src/observability/readiness.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';

/** A probe that counts its checks, so that a test sees how often a flood reaches the dependency. */
function countingProbe(name: string, outcome: 'up' | 'down', servesWithout = false) {
  const probe = {
    name,
    servesWithout,
    checks: 0,
    async check() {
      probe.checks++;
      if (outcome === 'down') throw new Error(`connect ECONNREFUSED internal-${name}.example:1`);
    },
  } satisfies DependencyProbe & { checks: number };
  return probe;
}

describe('the unauthenticated /readyz says ready or not, and nothing else', () => {
  it('answers a flood from one check of the dependencies it serves with, never opening a mail session', async () => {
    const database = countingProbe('mongodb', 'up');
    const mail = countingProbe('smtp', 'down', true);
    const api = await buildApiServer({ log: createLogger('silent'), probes: [database, mail] });
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => api.inject({ method: 'GET', url: '/readyz' })),
      );
      for (const answer of answers) {
        expect(answer.statusCode).toBe(200);
        expect(answer.json()).toEqual({ ready: true });
      }
      expect(database.checks).toBe(1);
      expect(mail.checks).toBe(0);
    } finally {
      await api.close();
    }
  });

  it('answers 503 when a dependency is down, without naming it or its host', async () => {
    const api = await buildApiServer({
      log: createLogger('silent'),
      probes: [countingProbe('mongodb', 'up'), countingProbe('elasticsearch', 'down')],
    });
    try {
      const answer = await api.inject({ method: 'GET', url: '/readyz' });
      expect(answer.statusCode).toBe(503);
      expect(answer.json()).toEqual({ ready: false });
      expect(answer.body).not.toMatch(/elasticsearch|internal-|ECONNREFUSED/);
    } finally {
      await api.close();
    }
  });
});

describe("the operators' readiness names every dependency and the schedules, to an admin only", () => {
  let app: TestApp;
  const tenant = uniqueTenant();
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('reports each dependency, mail included, and the retention schedules to an admin', async () => {
    // This tenant is registered and has its schedule: the count of scheduled tenants includes it.
    await app.services.retentionScheduler.ensure(tenant);
    const answer = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/readiness`,
      token: await app.token(tenant, ['admin']),
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const report = answer.json<
      ReadinessReport & { retentionSchedules: { registered: number; scheduled: number; missing: number } }
    >();
    expect(Object.keys(report.dependencies).sort()).toEqual(['elasticsearch', 'mongodb', 'smtp', 'temporal']);
    // Counts of the schedules, not an error in their place.
    expect(report.retentionSchedules).toEqual({
      registered: expect.any(Number),
      scheduled: expect.any(Number),
      missing: expect.any(Number),
    });
    expect(report.retentionSchedules.scheduled).toBeGreaterThanOrEqual(1);
    expect(report.retentionSchedules.registered).toBe(
      report.retentionSchedules.scheduled + report.retentionSchedules.missing,
    );
  });

  it('refuses other roles and callers without a token', async () => {
    const url = `/v1/tenants/${tenant}/readiness`;
    expect((await app.request({ method: 'GET', url, token: await app.token(tenant, ['dpo']) })).statusCode).toBe(403);
    expect((await app.request({ method: 'GET', url })).statusCode).toBe(401);
  });
});
