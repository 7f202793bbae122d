import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { expiryBucketOf } from '../../../src/governance/retention/expiry-bucket.js';
import { createMongoSweepStateStore } from '../../../src/governance/retention/sweep-state-store.js';
import { ensureRetentionSchedule, retentionScheduleId } from '../../../src/temporal/retention-schedule.js';
import type { RetentionSweepResult } from '../../../src/temporal/contracts/retention-sweep.contract.js';
import type { RetentionSweepInput } from '../../../src/temporal/contracts/retention-sweep.contract.js';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';

const HOUR = 3600_000;

/**
 * Expiry through the erasure workflow: records past their expiry become `expired` and are erased on ground
 * retention-expiry with a certificate; a legal hold keeps one (request partial) until its release; records not yet
 * expired are untouched. The sweep runs as a workflow on the test app's worker.
 */
describe('retention sweep', () => {
  let app: TestApp;
  let tenant: string;
  let expired: string[];
  let held: string;
  let future: string;
  let unset: string;
  let holdId: string;
  let result: RetentionSweepResult;
  let requestId: string;

  const memories = () =>
    app.runtime.db.collection<{ _id: string; expiresAt: Date | null; expiryBucket?: string | null }>(
      Collections.memories,
    );
  const setExpiry = async (id: string, expiresAt: Date) =>
    memories().updateOne({ _id: id }, { $set: { expiresAt, expiryBucket: expiryBucketOf(expiresAt) } });
  const sweep = (input: Omit<RetentionSweepInput, 'tenant'> = {}) =>
    app.worker.client.workflow.execute('retentionSweep', {
      taskQueue: app.worker.taskQueue,
      workflowId: `retention-test-${tenant}-${randomUUID().slice(0, 6)}`,
      args: [{ tenant, ...input }],
    }) as Promise<RetentionSweepResult>;
  const auditOf = async (action: string) => {
    const found: AuditEntry[] = [];
    for await (const entry of app.services.audit.entries(tenant)) if (entry.action === action) found.push(entry);
    return found;
  };

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    const agent = await app.token(tenant, ['agent']);
    const said = ['Prefers e-mail.', 'Lives in Porto.', 'Account manager is Rui.', 'Calls on Mondays.', 'Has a dog.'];
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: agent,
      payload: {
        // One call note states every memory (the derivation audit admits them as written), with a canary.
        events: [
          sampleEvent({ subjects: ['subject-r'], content: `Retention canary ${randomUUID()}. ${said.join(' ')}` }),
        ],
        memories: [
          'Prefers e-mail.',
          'Lives in Porto.',
          'Account manager is Rui.',
          'Calls on Mondays.',
          'Has a dog.',
        ].map((content, i) =>
          sampleMemory({
            subjects: [`subject-r${i}`],
            attribute: `a${i}`,
            content,
            provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract' },
          }),
        ),
      },
    });
    expect(written.statusCode, written.body).toBe(201);
    const ids = written.json<{ memories: { id: string }[] }>().memories.map((m) => m.id);
    [held, future, unset] = [ids[2]!, ids[3]!, ids[4]!];
    expired = ids.slice(0, 3);
    const past = new Date(Date.now() - 3 * HOUR);
    for (const id of expired) await setExpiry(id, past);
    await setExpiry(future, new Date(Date.now() + 30 * 24 * HOUR));

    const placed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds`,
      token: await app.token(tenant, ['legal'], 'counsel-r'),
      payload: { scope: { recordIds: [held] }, caseRef: 'case-retention-1' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    holdId = placed.json<{ id: string }>().id;

    result = await sweep();
    const filed = await auditOf('retention.erasure-filed');
    expect(filed).toHaveLength(1);
    requestId = filed[0]!.target!;
    const settled = await waitForState(app, tenant, requestId, ['partial', 'completed', 'needs-operator', 'rejected']);
    expect(settled.state).toBe('partial');
  }, 240_000);
  afterAll(async () => {
    await app?.close();
  });

  it('marks the expired records expired, queues them for erasure once, and files one request by ids', () => {
    expect(result).toMatchObject({
      scanned: 3,
      expired: 3,
      handedOff: 3,
      erasures: 1,
      requeued: 0,
      gone: 0,
      pendingLeft: false,
    });
    // The current hour, which is not over yet (or the previous one, if the hour turned since the sweep started).
    expect([expiryBucketOf(new Date()), expiryBucketOf(new Date(Date.now() - HOUR))]).toContain(result.until);
  });

  it('leaves one audit entry per transition to expired', async () => {
    const entries = await auditOf('memory.expired');
    expect(entries.map((e) => e.target).sort()).toEqual([...expired].sort());
    expect(
      entries.every((e) => e.actor === 'retention-sweep' && e.details.from === 'active' && e.details.to === 'expired'),
    ).toBe(true);
  });

  it('files the erasure as the system principal on ground retention-expiry, authorised by policy', async () => {
    const request = (await app.services.erasureRequests.get(tenant, requestId))!;
    expect(request).toMatchObject({
      legalGround: 'retention-expiry',
      requester: 'retention-sweep',
      requesterRoles: ['system'],
      selectorKind: 'memoryIds',
    });
    expect(request.policyDecision).toMatchObject({
      outcome: 'allow',
      ruleId: 'retention-sweep-erases-expired-records',
    });
    expect(request.holdIds).toEqual([holdId]);
  });

  it('erases the expired records outside the hold, with a partial certificate on ground retention-expiry', async () => {
    expect((await app.services.memories.getMany(tenant, expired)).map((m) => m._id)).toEqual([held]);
    const [certificate] = await app.services.certificates.byRequest(tenant, requestId);
    expect(certificate).toMatchObject({ legalGround: 'retention-expiry', status: 'partial' });
    expect(certificate!.holds).toEqual([{ holdId, exemptedCount: 1, exemptedIds: [held] }]);
    expect([...certificate!.closure.ids].sort()).toEqual([...expired].sort());
  });

  it('keeps the held record, expired and restricted to the legal role', async () => {
    const record = (await app.services.memories.get(tenant, held))!;
    expect(record).toMatchObject({ status: 'expired', restrictedBy: [holdId] });
    expect((await memories().findOne({ _id: held }))!.expiryBucket).toBeNull();
  });

  it('leaves records not yet expired untouched', async () => {
    const [f, u] = await Promise.all([
      app.services.memories.get(tenant, future),
      app.services.memories.get(tenant, unset),
    ]);
    expect(f).toMatchObject({ status: 'active', version: 1 });
    expect(u).toMatchObject({ status: 'active', version: 1 });
    expect((await memories().findOne({ _id: future }))!.expiryBucket).toBe(expiryBucketOf(f!.expiresAt!));
  });

  it('records the watermark, and a second run finds nothing to do', async () => {
    const state = await createMongoSweepStateStore(app.runtime.db).get(tenant);
    expect(state!.sweptBefore).toBe(result.until);
    expect(await sweep()).toMatchObject({ scanned: 0, expired: 0, handedOff: 0, erasures: 0 });
    expect(await auditOf('retention.swept')).toHaveLength(2);
  });

  describe('once legal releases the hold', () => {
    beforeAll(async () => {
      const released = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/legal-holds/${holdId}/release`,
        token: await app.token(tenant, ['legal'], 'counsel-r'),
      });
      expect(released.statusCode, released.body).toBe(200);
      expect(released.json()).toMatchObject({ active: false, resumedRequests: 1 });
      const settled = await waitForState(app, tenant, requestId, ['completed', 'needs-operator']);
      expect(settled.state).toBe('completed');
    }, 180_000);

    it('erases the formerly held record with a complete certificate chained to the partial one', async () => {
      expect(await app.services.memories.getMany(tenant, expired)).toEqual([]);
      const [partial, complete] = await app.services.certificates.byRequest(tenant, requestId);
      expect(complete).toMatchObject({ legalGround: 'retention-expiry', status: 'complete', holds: [] });
      expect(complete!.previousCertificateHash).toBe(partial!.hash);
    });
  });

  describe('buckets and migrations', () => {
    it('finds past expiries older than the look-back only when asked to rescan, and repairs misfiled records', async () => {
      const other = uniqueTenant();
      const threeDaysAgo = new Date(Date.now() - 72 * HOUR);
      const inTenDays = new Date(Date.now() + 240 * HOUR);
      const base = { tenant: other, namespace: 'support', subjects: ['s'], kind: 'fact', content: 'x', version: 1 };
      const gone = {
        ...base,
        _id: `mem_${randomUUID()}`,
        status: 'deleted',
        expiresAt: threeDaysAgo,
        expiryBucket: expiryBucketOf(threeDaysAgo),
      };
      const misfiled = {
        ...base,
        _id: `mem_${randomUUID()}`,
        status: 'active',
        expiresAt: inTenDays,
        expiryBucket: expiryBucketOf(threeDaysAgo),
      };
      await memories().insertMany([gone, misfiled] as never[]);
      const run = (input: Omit<RetentionSweepInput, 'tenant'> = {}) =>
        app.worker.client.workflow.execute('retentionSweep', {
          taskQueue: app.worker.taskQueue,
          workflowId: `retention-test-${other}-${randomUUID().slice(0, 6)}`,
          args: [{ tenant: other, ...input }],
        }) as Promise<RetentionSweepResult>;
      // A new tenant's first sweep starts at its registration (less a day): a record expired three days earlier can
      // only come from a migration.
      expect(await run()).toMatchObject({ scanned: 0 });
      expect(await run({ rescanFrom: new Date(Date.now() - 96 * HOUR).toISOString() })).toMatchObject({
        scanned: 2,
        gone: 1,
        requeued: 1,
        expired: 0,
        erasures: 0,
      });
      expect((await memories().findOne({ _id: gone._id }))!.expiryBucket).toBeNull();
      expect(await memories().findOne({ _id: misfiled._id })).toMatchObject({
        status: 'active',
        expiryBucket: expiryBucketOf(inTenDays),
      });
      await memories().deleteMany({ tenant: other });
    });
  });

  describe('the tenant schedule', () => {
    it('is created once, hourly, skipping overlaps, and starts the sweep when triggered', async () => {
      const options = { client: app.worker.client, taskQueue: app.worker.taskQueue };
      const handle = app.worker.client.schedule.getHandle(retentionScheduleId(tenant));
      // The tenant's first write created it; removed here so that creation itself is observed.
      expect((await handle.describe()).scheduleId).toBe(retentionScheduleId(tenant));
      expect(await ensureRetentionSchedule(options, tenant)).toBe(false);
      await handle.delete();
      expect(await ensureRetentionSchedule(options, tenant)).toBe(true);
      expect(await ensureRetentionSchedule(options, tenant)).toBe(false);
      try {
        const described = await handle.describe();
        expect(described.action).toMatchObject({
          type: 'startWorkflow',
          workflowType: 'retentionSweep',
          args: [{ tenant }],
        });
        expect(described.policies.overlap).toBe('SKIP');
        expect(described.spec.intervals?.[0]?.every).toBe(3600_000);
        await handle.trigger();
        let started: { workflowId: string; firstExecutionRunId: string } | undefined;
        for (let i = 0; i < 100 && !started; i++) {
          started = (await handle.describe()).info.recentActions[0]?.action.workflow;
          if (!started) await new Promise((r) => setTimeout(r, 100));
        }
        expect(started?.workflowId.startsWith(retentionScheduleId(tenant))).toBe(true);
        // The run follows its continue-as-new chain from the first execution to the result.
        const run = app.worker.client.workflow.getHandle(started!.workflowId, started!.firstExecutionRunId);
        expect(await run.result()).toMatchObject({ scanned: 0, erasures: 0 });
      } finally {
        await handle.delete();
      }
    }, 60_000);
  });
});
