/**
 * The hourly sweep is really there: a tenant's first write through the API creates its retention Schedule,
 * aimed at the worker's task queue, and the Schedule's own run (triggered here instead of waiting for the hour)
 * erases a record past its expiry on ground retention-expiry, with a certificate. No sweep helper is called.
 */
import { loadTokenKeys } from '../../../src/governance/auth/token-keys.js';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { expiryBucketOf } from '../../../src/governance/retention/expiry-bucket.js';
import { createRetentionScheduler, retentionScheduleId } from '../../../src/temporal/retention-schedule.js';
import { createMongoSweepStateStore } from '../../../src/governance/retention/sweep-state-store.js';
import { buildApiServer } from '../../../app/api/server.js';

describe('the retention schedule of a tenant', () => {
  let app: TestApp;
  const tenant = uniqueTenant();
  let memoryId: string;

  beforeAll(async () => {
    app = await startTestApp();
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent']),
      payload: {
        events: [sampleEvent({ subjects: ['subject-s'], content: `Schedule canary ${randomUUID()}` })],
        memories: [sampleMemory({ subjects: ['subject-s'], content: 'Prefers e-mail.' })],
      },
    });
    expect(written.statusCode, written.body).toBe(201);
    memoryId = written.json<{ memories: { id: string }[] }>().memories[0]!.id;
  });
  afterAll(async () => {
    await app?.services.retentionScheduler.retire(tenant);
    await app?.close();
  });

  it('exists after the first write, hourly, starting the sweep on the worker task queue', async () => {
    const schedule = await app.services.temporalClient.schedule.getHandle(retentionScheduleId(tenant)).describe();
    expect(schedule.spec.intervals?.[0]?.every).toBe(3600_000);
    expect(schedule.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'retentionSweep',
      taskQueue: app.worker.taskQueue,
    });
  });

  it("is counted by the operators' readiness, which notices when it goes missing", async () => {
    // The registry is shared by every run on this stack: the readiness is served here over a scheduler that sees this
    // test's tenant alone (when it is registered), so the counts are this tenant's and reconciling recreates no
    // other run's schedule.
    const registrations = createMongoSweepStateStore(app.runtime.db);
    const scheduler = createRetentionScheduler({
      client: app.services.temporalClient,
      taskQueue: app.worker.taskQueue,
      sweeps: { ...registrations, tenants: async () => ((await registrations.get(tenant)) ? [tenant] : []) },
    });
    const api = await buildApiServer({
      log: app.runtime.log,
      probes: app.runtime.probes,
      services: { ...app.services, retentionScheduler: scheduler },
      tokenKeys: loadTokenKeys(app.runtime.config.tokens),
    });
    const admin = await app.token(tenant, ['admin']);
    const ready = () =>
      api
        .inject({
          method: 'GET',
          url: `/v1/tenants/${tenant}/readiness`,
          headers: { authorization: `Bearer ${admin}` },
        })
        .then((r) => r.json<{ retentionSchedules: { registered: number; scheduled: number; missing: number } }>())
        .then((r) => r.retentionSchedules);
    // The schedule list is read from Temporal's visibility store, which follows a create or a delete shortly after.
    const readyWhen = async (expected: { registered: number; scheduled: number; missing: number }) => {
      let seen = await ready();
      for (const deadline = Date.now() + 15_000; Date.now() < deadline && !isDeepStrictEqual(seen, expected);) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        seen = await ready();
      }
      return seen;
    };
    const scheduled = { registered: 1, scheduled: 1, missing: 0 };
    const missing = { registered: 1, scheduled: 0, missing: 1 };
    try {
      expect(await readyWhen(scheduled)).toEqual(scheduled);
      await app.services.temporalClient.schedule.getHandle(retentionScheduleId(tenant)).delete();
      expect(await readyWhen(missing)).toEqual(missing);
      // What the worker does at start: every registered tenant's schedule is back (here: this tenant's).
      expect(await scheduler.ensureAll()).toEqual({ tenants: 1, created: 1 });
      await app.services.temporalClient.schedule.getHandle(retentionScheduleId(tenant)).describe();
      expect(await readyWhen(scheduled)).toEqual(scheduled);
    } finally {
      await api.close();
    }
  });

  it("erases an expired record when the schedule's run comes", async () => {
    // Time passing, made explicit: the record's retention ended three hours ago.
    const past = new Date(Date.now() - 3 * 3600_000);
    await app.runtime.db
      .collection<{ _id: string }>(Collections.memories)
      .updateOne({ _id: memoryId }, { $set: { expiresAt: past, expiryBucket: expiryBucketOf(past) } });
    await app.services.temporalClient.schedule.getHandle(retentionScheduleId(tenant)).trigger();

    let requestId: string | undefined;
    for (const deadline = Date.now() + 120_000; !requestId && Date.now() < deadline;) {
      const requests = await app.runtime.db
        .collection<{ _id: string; tenant: string; legalGround: string }>(Collections.erasures)
        .find({ tenant, legalGround: 'retention-expiry' })
        .toArray();
      requestId = requests[0]?._id;
      if (!requestId) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(requestId, 'the scheduled sweep filed an erasure').toBeDefined();
    const done = await waitForState(app, tenant, requestId!, ['completed', 'partial', 'needs-operator', 'rejected']);
    expect(done.state).toBe('completed');
    expect(await app.services.memories.get(tenant, memoryId)).toBeNull();
    const [certificate] = await app.services.certificates.byRequest(tenant, requestId!);
    expect(certificate).toMatchObject({ status: 'complete', legalGround: 'retention-expiry' });
    expect(certificate!.closure.ids).toContain(memoryId);
  });

  it('is removed when the tenant is retired', async () => {
    await app.services.retentionScheduler.retire(tenant);
    await expect(
      app.services.temporalClient.schedule.getHandle(retentionScheduleId(tenant)).describe(),
    ).rejects.toThrow();
    // Idempotent.
    await app.services.retentionScheduler.retire(tenant);
  });
});
