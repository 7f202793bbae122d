/**
 * A verification that meets a late index write: a writer read a record before the erasure marked it, and its index
 * document lands after the purge and the expunge, just as the verification starts. The writer's own second look
 * withdraws the document a few seconds later. The verification must neither certify over the document nor send the
 * request to an operator for what settles by itself: it looks again until the look is clean.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState, type SubjectGraph } from '../../support/erasure-fixture.js';
import { stepGate } from '../../support/step-gate.js';
import { activityAttempts } from '../../support/activity-attempts.js';
import { withdrawLate } from '../../../src/substrate/search/index-unless-erased.js';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';

/** How long after the verification starts the writer's withdrawal runs. */
const WITHDRAW_AFTER_MS = 4000;

describe('a verification that meets a late index write', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let late: MemoryRecord;
  let landed = false;
  let withdrawal: Promise<unknown> | null = null;

  beforeAll(async () => {
    app = await startTestApp({
      activityInterceptors: [
        stepGate(async (activity, input) => {
          if (landed || activity !== 'verifyErasure' || input.tenant !== graph?.tenant) return;
          landed = true;
          // The document the writer indexed from what it read before the marking, landing after the expunge.
          await app.services.index.upsert(graph.tenant, [late], { refresh: 'wait_for' });
          withdrawal = new Promise((resolve) => setTimeout(resolve, WITHDRAW_AFTER_MS)).then(() =>
            withdrawLate(app.services.index, graph.tenant, [late._id]),
          );
        }),
      ],
    });
  });
  afterAll(async () => {
    await withdrawal?.catch(() => undefined);
    await app?.close();
  });

  it('looks again until the withdrawal lands, then certifies a clean look', async () => {
    const tenant = uniqueTenant();
    graph = await buildSubjectGraph(app, tenant, `zl${randomUUID().slice(0, 8)}`);
    const read = await app.services.memories.get(tenant, graph.memories[0]!);
    expect(read).not.toBeNull();
    late = read!;

    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    const settled = await waitForState(app, tenant, requestId, ['completed', 'needs-dpo', 'needs-operator'], 240_000);
    expect(landed, 'the late document landed as the verification started').toBe(true);
    await withdrawal;
    expect(settled.state, `${settled.state}: ${settled.operatorNote}`).toBe('completed');

    // The first look saw the document (or its deleted copy in the segments) and a later one passed.
    const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));
    expect((await activityAttempts(handle, 'verifyErasure')).scheduled).toBeGreaterThanOrEqual(2);

    // What the certificate states is the clean look: nothing found by any probe, no deleted document left.
    const request = await app.services.erasureRequests.get(tenant, requestId);
    expect(request?.probeResults?.length).toBeGreaterThan(0);
    for (const probe of request!.probeResults!) expect(probe.found, JSON.stringify(probe)).toBe(0);
    expect(request?.segmentsDeletedDocs).toBe(0);
    const left = await app.services.index.probe(tenant, { ids: [late._id] });
    expect(left.byId).toEqual([]);
  }, 300_000);
});
