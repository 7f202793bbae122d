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
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { stepGate } from '../../support/step-gate.js';
import { activityAttempts } from '../../support/activity-attempts.js';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import { erasurePhaseQuery } from '../../../src/temporal/contracts/erasure.contract.js';

describe('an outage of the bookkeeping between steps, past its retries', () => {
  let app: TestApp;
  let tenant = '';
  /** While set, the faulted calls of this test's tenant fail as a refused connection would. */
  let down = true;

  beforeAll(async () => {
    app = await startTestApp({
      activityInterceptors: [
        stepGate(async (activity, input) => {
          if (!down || input.tenant !== tenant) return;
          const completing = activity === 'setErasureState' && input.state === 'completed';
          if (completing || activity === 'escalateToOperator')
            throw ApplicationFailure.create({ message: 'MongoServerSelectionError (ECONNREFUSED)', type: 'Outage' });
        }),
      ],
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('parks the run for an operator instead of ending it, and completes on the retry once the servers are back', async () => {
    tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `zb${randomUUID().slice(0, 8)}`);
    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));

    // The completing write's 8 attempts (about a minute of backoff), then the escalation's 6 (about 30 s).
    const deadline = Date.now() + 240_000;
    for (;;) {
      const described = await handle.describe();
      expect(described.status.name, 'the run is still open').toBe('RUNNING');
      const { phase, step } = await handle.query(erasurePhaseQuery);
      if (phase === 'needs-operator' && (await activityAttempts(handle, 'escalateToOperator')).failed > 0) {
        expect(step).toBe('certify');
        break;
      }
      if (Date.now() > deadline) throw new Error(`the run is ${phase} at ${step}, not parked for an operator`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    // Certified already; the state write and the escalation never landed, so the stored request still says running.
    expect((await app.services.certificates.byRequest(tenant, requestId)).length).toBe(1);
    expect((await app.services.erasureRequests.get(tenant, requestId))?.state).toBe('running');

    down = false;
    await app.services.workflows.erasure.retry(tenant, requestId);
    const done = await waitForState(app, tenant, requestId, ['completed'], 120_000);
    expect(done.state).toBe('completed');
    await handle.result();
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect((await app.services.certificates.byRequest(tenant, requestId)).length).toBe(1);
  }, 360_000);
});
