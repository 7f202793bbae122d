/**
 * The GDPR clock on the Temporal time-skipping test server: real MongoDB, Elasticsearch and SMTP behind the
 * activities, only Temporal's clock is fast-forwarded. A legal hold parks each request in `partial`, so the
 * workflow is still open when its deadline timers fire.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { readStackManifest, loadStackConfig } from '../../../stack/stack-config.js';
import { readMailbox, waitForMessage, type CapturedMessage } from '../../../stack/smtp/mailbox.js';
import { createLetheWorker } from '../../../app/worker/worker.js';
import { newErasureRequest } from '../../../src/governance/erasure/erasure-filing.js';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { SearchAttributes } from '../../../src/shared/search-attributes.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, waitForState } from '../../support/erasure-fixture.js';
import { workflowBundlePath } from '../../support/paths.js';
import { uniqueId } from '../../support/harness.js';
import { quietTemporal } from '../../support/quiet-temporal.js';
import { stepGate } from '../../support/step-gate.js';

const stack = loadStackConfig();
const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const DAY = 24 * 3600_000;

/**
 * The SDK gives the test server about 5 s to answer and a JVM on two busy cores sometimes needs longer: start
 * it with a quicker JIT and try again a few times (each try warms the page cache for the next).
 */
async function startTimeSkippingServer(): Promise<TestWorkflowEnvironment> {
  process.env.TEMPORAL_TEST_SERVER_JAVA_OPTS ??= '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({
        server: { executable: { type: 'existing-path', path: readStackManifest().temporalTestServer } },
      });
    } catch (error) {
      if (attempt === 4 || !/did not start within/.test((error as Error).message)) throw error;
    }
  }
}

function addMonths(iso: string, months: number): string {
  const d = new Date(iso);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.toISOString();
}

describe('the GDPR clock of an erasure request', () => {
  let env: TestWorkflowEnvironment;
  let app: TestApp;
  let stopWorker: () => Promise<void>;
  const taskQueue = uniqueId('tq-clock');
  /** The tenant whose extensions the store refuses to record, as a store that is down would. */
  let storeDownFor = '';

  beforeAll(async () => {
    quietTemporal();
    env = await startTimeSkippingServer();
    // The test server validates search attributes like a real one: register the workflow's.
    await env.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: Object.fromEntries(Object.values(SearchAttributes).map((key) => [key.name, KEYWORD])),
    });
    // Test data goes in through the real API (its own worker on the dev server); the erasure workflows run
    // on the time-skipping server, with a worker of this file over the same stores.
    app = await startTestApp();
    const worker = await createLetheWorker(app.runtime, {
      connection: env.nativeConnection,
      taskQueue,
      services: app.services,
      workflowBundle: { codePath: workflowBundlePath() },
      activityInterceptors: [
        stepGate(async (activity, input) => {
          if (activity === 'recordExtension' && input.tenant === storeDownFor)
            throw ApplicationFailure.create({ message: 'MongoServerSelectionError (ECONNREFUSED)', type: 'Outage' });
        }),
      ],
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
    };
  }, 180_000);
  afterAll(async () => {
    await stopWorker?.();
    await env?.teardown();
    await app?.close();
  });

  /** A subject held by legal, an erasure request for it started on the test server and parked in `partial`. */
  async function parkedErasure(): Promise<{ tenant: string; requestId: string; handle: WorkflowHandle }> {
    const graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    const tenant = graph.tenant;
    const hold = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds`,
      token: await app.token(tenant, ['legal']),
      payload: { scope: { subjectId: graph.subject }, caseRef: 'case-clock' },
    });
    expect(hold.statusCode, hold.body).toBe(201);
    const receivedAt = new Date(await env.currentTimeMs());
    const dueAt = new Date(addMonths(receivedAt.toISOString(), 1));
    const selector = { subjectId: graph.subject };
    const requestId = `era_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const request = newErasureRequest(
      { id: requestId, principal: { tenant, id: 'dpo-1', roles: ['dpo'] }, receivedAt },
      { selector, legalGround: 'art17-1a' },
      app.services.fingerprints.of('erasure-selector', tenant, canonicalJson(selector)),
    );
    // The clock under test is the request's: one month from receipt, as filing computes it.
    expect(request.dueAt).toEqual(dueAt);
    await app.services.erasureRequests.create(request);
    const handle = await env.client.workflow.start('erasureRequest', {
      taskQueue,
      workflowId: erasureWorkflowId(tenant, requestId),
      args: [{ tenant, requestId, receivedAt: receivedAt.toISOString() }],
    });
    const settled = await waitForState(app, tenant, requestId, ['partial', 'completed', 'needs-operator', 'rejected']);
    expect(settled.state).toBe('partial');
    return { tenant, requestId, handle };
  }

  const mailFor = (requestId: string, kind: string) => (m: CapturedMessage) =>
    m.subject.includes(requestId) && m.subject.endsWith(`— ${kind}`);
  /** The deadline warnings the workflow sent, from its history: each one's kind and the workflow time it went out. */
  const deadlineWarnings = async (handle: WorkflowHandle) =>
    ((await handle.fetchHistory()).events ?? []).flatMap((event) => {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name !== 'notifyDpo') return [];
      const { kind } = defaultPayloadConverter.fromPayload<{ kind: string }>(scheduled.input!.payloads![0]!);
      const at = Number(event.eventTime!.seconds) * 1000 + Math.floor((event.eventTime!.nanos ?? 0) / 1e6);
      return kind.startsWith('deadline-') ? [{ kind, at }] : [];
    });
  const deadlineMails = async (requestId: string) =>
    (await readMailbox(stack.smtp.captureDir)).filter(
      (m) => m.subject.includes(requestId) && m.subject.includes('deadline'),
    );

  it('e-mails the DPO three days before the due date and again once it has passed', async () => {
    const { requestId, handle } = await parkedErasure();
    const { dueAt, phase } = await handle.query<{ phase: string; dueAt: string }>('erasurePhase');
    expect(phase).toBe('partial');
    expect(await deadlineMails(requestId)).toEqual([]);

    await env.sleep('40 days');
    const approaching = await waitForMessage(stack.smtp.captureDir, mailFor(requestId, 'deadline-approaching'), 30_000);
    const passed = await waitForMessage(stack.smtp.captureDir, mailFor(requestId, 'deadline-passed'), 30_000);
    expect(approaching.text).toContain(`due on ${dueAt}`);
    expect(passed.text).toContain(`passed its due date (${dueAt})`);
    expect(Date.parse(approaching.receivedAt)).toBeLessThanOrEqual(Date.parse(passed.receivedAt));
    // Each warning once; the request itself still waits on its hold.
    expect(await deadlineMails(requestId)).toHaveLength(2);
    expect((await handle.query<{ phase: string }>('erasurePhase')).phase).toBe('partial');
  }, 170_000);

  it('keeps an extension the store could not record, records it once the store is back, and refuses another meanwhile', async () => {
    const { tenant, requestId, handle } = await parkedErasure();
    const originalDue = (await handle.query<{ dueAt: string }>('erasurePhase')).dueAt;
    storeDownFor = tenant;
    // The recording's retries run out against the store; the DPO is told the clock moved, since it did.
    const extended = await handle.executeUpdate('extendDeadline', { args: [{ months: 1, reasonHash: 'h' }] });
    expect(extended).toEqual({ dueAt: addMonths(originalDue, 1) });
    expect((await handle.query<{ dueAt: string }>('erasurePhase')).dueAt).toBe(addMonths(originalDue, 1));
    expect(await app.services.erasureRequests.get(tenant, requestId)).toMatchObject({
      extensionMonths: 0,
      dueAt: new Date(originalDue),
    });
    // A second extension while the first is unrecorded would record totals out of order: refused, nothing moved.
    const refused = await handle.executeUpdate('extendDeadline', { args: [{ months: 1, reasonHash: 'h' }] }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((refused as WorkflowUpdateFailedError).cause?.message).toContain('still being recorded');
    expect((await handle.query<{ dueAt: string }>('erasurePhase')).dueAt).toBe(addMonths(originalDue, 1));

    storeDownFor = '';
    await env.sleep('6 minutes');
    const mail = await waitForMessage(stack.smtp.captureDir, mailFor(requestId, 'extended'), 30_000);
    expect(mail.text).toContain(`now due on ${addMonths(originalDue, 1)}`);
    expect(await app.services.erasureRequests.get(tenant, requestId)).toMatchObject({
      extensionMonths: 1,
      dueAt: new Date(addMonths(originalDue, 1)),
      extensionReasonHash: 'h',
    });
    // Once recorded, the second month is granted as usual, and the run still waits on its hold.
    expect(await handle.executeUpdate('extendDeadline', { args: [{ months: 1, reasonHash: 'h' }] })).toEqual({
      dueAt: addMonths(originalDue, 2),
    });
    expect(await app.services.erasureRequests.get(tenant, requestId)).toMatchObject({ extensionMonths: 2 });
    expect((await handle.query<{ phase: string }>('erasurePhase')).phase).toBe('partial');
  }, 170_000);

  describe('an extension of the deadline', () => {
    let tenant: string;
    let requestId: string;
    let handle: WorkflowHandle;
    let originalDue: string;

    beforeAll(async () => {
      ({ tenant, requestId, handle } = await parkedErasure());
      originalDue = (await handle.query<{ dueAt: string }>('erasurePhase')).dueAt;
    }, 170_000);

    it('moves the due date by a month, records it and e-mails the DPO', async () => {
      const first = await handle.executeUpdate('extendDeadline', { args: [{ months: 1, reasonHash: 'h' }] });
      expect(first).toEqual({ dueAt: addMonths(originalDue, 1) });
      const mail = await waitForMessage(stack.smtp.captureDir, mailFor(requestId, 'extended'), 30_000);
      expect(mail.text).toContain(`now due on ${addMonths(originalDue, 1)}`);
      const stored = await app.services.erasureRequests.get(tenant, requestId);
      expect(stored).toMatchObject({ extensionMonths: 1, dueAt: new Date(addMonths(originalDue, 1)) });
      expect((await handle.query<{ dueAt: string }>('erasurePhase')).dueAt).toBe(addMonths(originalDue, 1));
    });

    it('accepts a second month and refuses a third in the validator', async () => {
      expect(await handle.executeUpdate('extendDeadline', { args: [{ months: 1, reasonHash: 'h' }] })).toEqual({
        dueAt: addMonths(originalDue, 2),
      });
      const refused = await handle.executeUpdate('extendDeadline', { args: [{ months: 1, reasonHash: 'h' }] }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((refused as WorkflowUpdateFailedError).cause?.message).toContain(
        'at most two months of extension in total',
      );
      expect((await handle.query<{ dueAt: string }>('erasurePhase')).dueAt).toBe(addMonths(originalDue, 2));
      expect(await app.services.erasureRequests.get(tenant, requestId)).toMatchObject({ extensionMonths: 2 });
      const extended = (await readMailbox(stack.smtp.captureDir)).filter(mailFor(requestId, 'extended'));
      expect(extended).toHaveLength(2);
    });

    it('warns on the extended due date, not on the original one', async () => {
      const extendedDue = addMonths(originalDue, 2);
      // Past the original due date, then past the extended one.
      await env.sleep('40 days');
      await env.sleep('60 days');
      const approaching = await waitForMessage(
        stack.smtp.captureDir,
        mailFor(requestId, 'deadline-approaching'),
        30_000,
      );
      const passed = await waitForMessage(stack.smtp.captureDir, mailFor(requestId, 'deadline-passed'), 30_000);
      expect(approaching.text).toContain(`due on ${extendedDue}`);
      expect(passed.text).toContain(`passed its due date (${extendedDue})`);
      // The workflow sends its warnings one after the other: a warning at the original due date would have gone out
      // before these two. None did: these are the only ones, each sent at the extended due date's moment.
      expect(await deadlineMails(requestId)).toHaveLength(2);
      const warnings = await deadlineWarnings(handle);
      expect(warnings.map((w) => w.kind)).toEqual(['deadline-approaching', 'deadline-passed']);
      const sentAt = (k: number) => `${warnings[k]!.kind} sent at ${new Date(warnings[k]!.at).toISOString()}`;
      expect(warnings[0]!.at, sentAt(0)).toBeGreaterThanOrEqual(Date.parse(extendedDue) - 3 * DAY);
      expect(warnings[1]!.at, sentAt(1)).toBeGreaterThanOrEqual(Date.parse(extendedDue));
    }, 120_000);
  });
});
