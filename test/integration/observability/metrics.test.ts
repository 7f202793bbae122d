/**
 * The operator's `/metrics`: an admission, a retrieval, refusals of each kind and an erasure run to completion
 * move the series an operator pages on, and no label anywhere in the exposition names a tenant, principal,
 * subject, request or record.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { uniqueId } from '../../support/harness.js';
import { sampleEvent, sampleMemory, statedBatch } from '../../support/samples.js';
import { waitForState } from '../../support/erasure-fixture.js';
import { stepGate } from '../../support/step-gate.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { labelValues, parseExposition, valueOf, type Sample } from '../../support/prometheus-text.js';

/** The states an erasure request has not left for good. */
const OPEN_STATES = ['received', 'running', 'partial', 'needs-operator', 'needs-dpo'];
const METRICS_TOKEN = `metrics-${randomUUID()}`;
/** Low enough to spend in a test, high enough that no other call of the test spends them. */
const PER_PRINCIPAL = 20;
const WRITES_PER_DAY = 6;

describe('operator metrics', () => {
  let app: TestApp;
  const tenant = uniqueTenant();
  /** A second tenant whose daily write quota the test spends. */
  const thrifty = uniqueTenant();
  const writer = uniqueId('agent');
  const dpo = uniqueId('dpo');
  const flooder = uniqueId('agent');
  const subject = uniqueId('subject');
  const sensitive: string[] = [tenant, thrifty, writer, dpo, flooder, subject];

  let releasePurge!: () => void;
  const purgeReleased = new Promise<void>((resolve) => (releasePurge = resolve));
  let purgeReached!: () => void;
  const purgeHeld = new Promise<void>((resolve) => (purgeReached = resolve));

  let whilePurging: Sample[];
  /** Open requests by state, as stored, for the states whose count was the same just before and just after that scrape. */
  let steadyWhilePurging: Record<string, number>;
  let dueAtWhilePurging: Date;
  let after: Sample[];

  /** `null`: no Authorization header at all. */
  const scrape = async (authorization: string | null = `Bearer ${METRICS_TOKEN}`) =>
    app.request({ method: 'GET', url: '/metrics', ...(authorization ? { headers: { authorization } } : {}) });
  /** Every tenant's erasure requests in each open state, counted in the store. */
  const openRequestsByState = async () =>
    Object.fromEntries(
      await Promise.all(
        OPEN_STATES.map(
          async (state) =>
            [state, await app.runtime.db.collection(Collections.erasures).countDocuments({ state })] as const,
        ),
      ),
    );
  const samples = async () => {
    const response = await scrape();
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(response.body);
  };

  beforeAll(async () => {
    app = await startTestApp({
      metricsToken: METRICS_TOKEN,
      config: {
        LETHE_RATE_LIMIT_PER_PRINCIPAL: String(PER_PRINCIPAL),
        LETHE_QUOTA_WRITES_PER_DAY: String(WRITES_PER_DAY),
      },
      // Holds this tenant's purge until the test has scraped the request while it is open.
      activityInterceptors: [
        stepGate(async (activity, input) => {
          if (activity !== 'purgeRecords' || input['tenant'] !== tenant) return;
          purgeReached();
          await purgeReleased;
        }),
      ],
    });

    // An admission: one memory that cites the event stating it.
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], writer),
      payload: statedBatch([
        sampleMemory({ subjects: [subject], attribute: 'contact-channel', content: 'Prefers e-mail contact.' }),
      ]),
    });
    expect(written.statusCode, written.body).toBe(201);
    const body = written.json<{ events: { id: string }[]; memories: { id: string }[] }>();
    sensitive.push(...body.events.map((e) => e.id), ...body.memories.map((m) => m.id));

    // A retrieval by the writer.
    const retrieved = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrieve`,
      token: await app.token(tenant, ['agent'], writer),
      payload: { query: 'how does the customer want to be contacted?' },
    });
    expect(retrieved.statusCode, retrieved.body).toBe(200);

    // A call without a token, and one by a principal of another tenant.
    const anonymous = await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/erasure-requests` });
    expect(anonymous.statusCode).toBe(401);
    const foreign = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/erasure-requests`,
      token: await app.token(thrifty, ['dpo'], dpo),
    });
    expect(foreign.statusCode).toBe(403);

    // A principal that spends its budget.
    const flooderToken = await app.token(tenant, ['dpo'], flooder);
    const statuses: number[] = [];
    for (let i = 0; i <= PER_PRINCIPAL; i++) {
      const r = await app.request({
        method: 'GET',
        url: `/v1/tenants/${tenant}/erasure-requests`,
        token: flooderToken,
      });
      statuses.push(r.statusCode);
    }
    expect(statuses.at(-1)).toBe(429);

    // A tenant whose writes for the day are spent.
    const overQuota = await app.request({
      method: 'POST',
      url: `/v1/tenants/${thrifty}/batches`,
      token: await app.token(thrifty, ['agent'], writer),
      payload: {
        events: Array.from({ length: WRITES_PER_DAY + 1 }, () => sampleEvent({ subjects: [subject] })),
        memories: [],
      },
    });
    expect(overQuota.statusCode, overQuota.body).toBe(429);

    // An erasure, held at its purge while the backlog is scraped, then run to completion.
    const filed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/erasure-requests`,
      token: await app.token(tenant, ['dpo'], dpo),
      payload: { selector: { subjectId: subject }, legalGround: 'art17-1a' },
    });
    expect(filed.statusCode, filed.body).toBe(202);
    const requestId = filed.json<{ id: string }>().id;
    sensitive.push(requestId);
    await purgeHeld;
    dueAtWhilePurging = (await app.services.erasureRequests.get(tenant, requestId))!.dueAt;
    const countsBefore = await openRequestsByState();
    whilePurging = await samples();
    const countsAfter = await openRequestsByState();
    steadyWhilePurging = Object.fromEntries(
      Object.entries(countsBefore).filter(([state, n]) => countsAfter[state] === n),
    );
    releasePurge();
    const final = await waitForState(app, tenant, requestId, ['completed', 'needs-operator', 'rejected']);
    expect(final.state, final.operatorNote ?? '').toBe('completed');
    sensitive.push(...final.certificateIds);
    after = await samples();
  }, 240_000);

  afterAll(async () => {
    releasePurge?.();
    await app?.close();
  });

  it('refuses a scrape without the configured token', async () => {
    expect((await scrape(null)).statusCode).toBe(401);
    expect((await scrape('Bearer not-the-token')).statusCode).toBe(401);
    expect((await scrape()).statusCode).toBe(200);
  });

  it('counts an open erasure request by state, with its age and the time to its due date', () => {
    expect(valueOf(whilePurging, 'lethe_erasure_backlog_up')).toBe(1);
    expect(valueOf(whilePurging, 'lethe_erasure_requests', { state: 'running' })).toBeGreaterThanOrEqual(1);
    // One series per open state, finished states not among them, each the number of requests stored in that state
    // (compared where other tests' requests left that count unchanged across the scrape).
    const byState = whilePurging.filter((s) => s.name === 'lethe_erasure_requests');
    expect(byState.map((s) => s.labels['state']).sort()).toEqual([...OPEN_STATES].sort());
    for (const { labels, value } of byState) expect(Number.isInteger(value), labels['state']).toBe(true);
    expect(Object.keys(steadyWhilePurging).length).toBeGreaterThan(0);
    for (const [state, n] of Object.entries(steadyWhilePurging)) {
      expect(valueOf(whilePurging, 'lethe_erasure_requests', { state }), state).toBe(n);
    }
    expect(valueOf(whilePurging, 'lethe_erasure_needs_operator')).toBe(
      valueOf(whilePurging, 'lethe_erasure_requests', { state: 'needs-operator' }),
    );
    // Our request is open, so the oldest open one is at least as old and due no later than ours.
    expect(valueOf(whilePurging, 'lethe_erasure_oldest_open_age_seconds')).toBeGreaterThan(0);
    const dueIn = valueOf(whilePurging, 'lethe_erasure_due_in_seconds')!;
    expect(dueIn).toBeLessThanOrEqual((dueAtWhilePurging.getTime() - Date.now()) / 1000 + 60);
    expect(Number.isFinite(dueIn)).toBe(true);
  });

  it('times every step of the erasure', () => {
    for (const step of ['locate', 'closure', 'authorise', 'tombstone', 'purge', 'expunge', 'verify']) {
      const count = valueOf(after, 'lethe_erasure_step_duration_seconds_count', { step, outcome: 'done' });
      expect(count, step).toBeGreaterThanOrEqual(1);
    }
    expect(valueOf(whilePurging, 'lethe_erasure_step_duration_seconds_count', { step: 'purge' })).toBeUndefined();
  });

  it('times admissions, retrievals and audit appends', () => {
    expect(valueOf(after, 'lethe_admission_duration_seconds_count', { status_class: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'lethe_admission_duration_seconds_count', { status_class: '4xx' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'lethe_retrieval_duration_seconds_count', { status_class: '2xx' })).toBe(1);
    expect(valueOf(after, 'lethe_audit_append_duration_seconds_count')).toBeGreaterThan(0);
    expect(
      valueOf(after, 'lethe_http_request_duration_seconds_count', {
        route: '/v1/tenants/:tenant/retrieve',
        method: 'POST',
        status_class: '2xx',
      }),
    ).toBe(1);
  });

  it('counts refusals by reason, rate limits by budget and quota refusals by quota', () => {
    expect(valueOf(after, 'lethe_refusals_total', { reason: 'unauthenticated' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'lethe_refusals_total', { reason: 'foreign-tenant' })).toBe(1);
    expect(valueOf(after, 'lethe_rate_limited_total', { budget: 'principal' })).toBe(1);
    expect(valueOf(after, 'lethe_quota_refusals_total', { quota: 'writes-per-day' })).toBe(1);
  });

  it('names no tenant, principal, subject, request or record in any label', () => {
    expect(sensitive.length).toBeGreaterThan(8);
    const values = [...labelValues(whilePurging), ...labelValues(after)];
    expect(values.length).toBeGreaterThan(20);
    const leaks = values.filter((value) => sensitive.some((id) => value.includes(id)));
    expect(leaks).toEqual([]);
  });
});
