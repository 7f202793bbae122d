/**
 * A store that stays down past the retries of the bookkeeping between steps (the request's state written as
 * completed), while the mail server refuses the operator's escalation too. The run must not end: it parks for an
 * operator (its phase says so even though the escalation never landed), keeps trying the escalation, and once the
 * servers are back an operator's retry completes the request with its one certificate. A run that failed instead
 * would leave the stored request reading `running` for ever, with nothing to move it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { stepGate } from '../../support/step-gate.js';
import { activityAttempts } from '../../support/activity-attempts.js';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import { erasurePhaseQuery } from '../../../src/temporal/contracts/erasure.contract.js';

describe('an outage of the bookkeeping between steps, past its retries', () => {
  let app: TestApp;
  let tenant = '';
  /** The calls of this test's tenant that fail as a refused connection would, or none. */
  let fails: ((activity: string, input: Record<string, unknown>) => boolean) | null = null;

  beforeAll(async () => {
    app = await startTestApp({
      activityInterceptors: [
        stepGate(async (activity, input) => {
          if (input.tenant === tenant && fails?.(activity, input))
            throw ApplicationFailure.create({ message: 'MongoServerSelectionError (ECONNREFUSED)', type: 'Outage' });
        }),
      ],
    });
  });

  /** Polls the run until `parked` says it is where the test wants it; the run must stay open throughout. */
  async function waitForRun(handle: WorkflowHandle, parked: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 240_000;
    for (;;) {
      const described = await handle.describe();
      expect(described.status.name, 'the run is still open').toBe('RUNNING');
      if (await parked()) return;
      const { phase, step } = await handle.query(erasurePhaseQuery);
      if (Date.now() > deadline) throw new Error(`the run is ${phase} at ${step}, not ${what}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  afterAll(async () => {
    await app?.close();
  });

  it('parks the run for an operator instead of ending it, and completes on the retry once the servers are back', async () => {
    tenant = uniqueTenant();
    fails = (activity, input) =>
      (activity === 'setErasureState' && input.state === 'completed') || activity === 'escalateToOperator';
    const graph = await buildSubjectGraph(app, tenant, `zb${randomUUID().slice(0, 8)}`);
    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));

    // The completing write's 8 attempts (about a minute of backoff), then the escalation's 6 (about 30 s).
    await waitForRun(
      handle,
      async () =>
        (await handle.query(erasurePhaseQuery)).phase === 'needs-operator' &&
        (await activityAttempts(handle, 'escalateToOperator')).failed > 0,
      'parked for an operator',
    );
    expect((await handle.query(erasurePhaseQuery)).step).toBe('certify');
    // Certified already; the state write and the escalation never landed, so the stored request still says running.
    expect((await app.services.certificates.byRequest(tenant, requestId)).length).toBe(1);
    expect((await app.services.erasureRequests.get(tenant, requestId))?.state).toBe('running');

    fails = null;
    await app.services.workflows.erasure.retry(tenant, requestId);
    const done = await waitForState(app, tenant, requestId, ['completed'], 120_000);
    expect(done.state).toBe('completed');
    await handle.result();
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect((await app.services.certificates.byRequest(tenant, requestId)).length).toBe(1);
  }, 360_000);

  it('under a legal hold, parks when the partial state cannot be stored and waits on the hold once it is, its mail lost', async () => {
    tenant = uniqueTenant();
    fails = (activity, input) =>
      (activity === 'setErasureState' && input.state === 'partial') ||
      (activity === 'notifyDpo' && input.kind === 'partial');
    const graph = await buildSubjectGraph(app, tenant, `zh${randomUUID().slice(0, 8)}`);
    const hold = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds`,
      token: await app.token(tenant, ['legal'], 'counsel-1'),
      payload: { scope: { subjectId: graph.subject }, caseRef: 'case-outage' },
    });
    expect(hold.statusCode, hold.body).toBe(201);
    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));

    // The partial certificate is issued; storing the partial state fails past its 8 attempts: parked, not failed.
    await waitForRun(
      handle,
      async () => (await app.services.erasureRequests.get(tenant, requestId))?.state === 'needs-operator',
      'parked for an operator',
    );
    expect(await handle.query(erasurePhaseQuery)).toMatchObject({ phase: 'needs-operator', step: 'certify' });
    expect((await app.services.certificates.byRequest(tenant, requestId)).map((c) => c.status)).toEqual(['partial']);

    // The store is back, the mail server still refuses the DPO's partial mail: the run waits on its hold regardless.
    fails = (activity, input) => activity === 'notifyDpo' && input.kind === 'partial';
    await app.services.workflows.erasure.retry(tenant, requestId);
    await waitForRun(
      handle,
      async () =>
        (await app.services.erasureRequests.get(tenant, requestId))?.state === 'partial' &&
        (await activityAttempts(handle, 'notifyDpo')).failed > 0,
      'partial with its mail lost',
    );
    expect((await handle.query(erasurePhaseQuery)).phase).toBe('partial');

    fails = null;
    const released = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds/${hold.json<{ id: string }>().id}/release`,
      token: await app.token(tenant, ['legal'], 'counsel-1'),
    });
    expect(released.statusCode, released.body).toBe(200);
    expect((await waitForState(app, tenant, requestId, ['completed'], 180_000)).state).toBe('completed');
    await handle.result();
    expect((await app.services.certificates.byRequest(tenant, requestId)).map((c) => c.status)).toEqual([
      'partial',
      'complete',
    ]);
  }, 480_000);
});
