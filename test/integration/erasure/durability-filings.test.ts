/**
 * Durability of filing: twenty concurrent identical filings are one request and one workflow run; it finishes
 * once (one certificate, each audit entry once). Filing again after it finished opens a new request; filing
 * with the same request key returns the same request, even after it finished, and never runs it again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, waitForState, type SubjectGraph } from '../../support/erasure-fixture.js';

const FILINGS = 20;
const FINISHED = ['completed', 'needs-operator', 'rejected'];

describe('duplicate and concurrent erasure filings', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let dpo: string;

  const file = (payload: object) =>
    app.request({ method: 'POST', url: `/v1/tenants/${graph.tenant}/erasure-requests`, token: dpo, payload });

  /** Runs of the request's workflow id, as Temporal's visibility lists them. */
  async function runsOf(requestId: string): Promise<{ runId: string; status: string }[]> {
    const runs: { runId: string; status: string }[] = [];
    const query = `WorkflowId = '${erasureWorkflowId(graph.tenant, requestId)}'`;
    for await (const run of app.worker.client.workflow.list({ query }))
      runs.push({ runId: run.runId, status: run.status.name });
    return runs;
  }

  /** Visibility is eventually consistent: waits until it lists the closed run(s), then answers them all. */
  async function closedRunsOf(requestId: string, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const runs = await runsOf(requestId);
      if ((runs.length > 0 && runs.every((r) => r.status !== 'RUNNING')) || Date.now() > deadline) return runs;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** The request's erasure audit entries, counted by action. */
  async function auditCounts(requestId: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for await (const entry of app.services.audit.entries(graph.tenant)) {
      const ofRequest =
        entry.target === requestId || (entry.details as { requestId?: string } | null)?.requestId === requestId;
      if (ofRequest && entry.action.startsWith('erasure.')) counts[entry.action] = (counts[entry.action] ?? 0) + 1;
    }
    return counts;
  }

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    dpo = await app.token(graph.tenant, ['dpo'], 'dpo-1');
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  describe('twenty identical filings at once', () => {
    let requestId: string;

    beforeAll(async () => {
      const answers = await Promise.all(
        Array.from({ length: FILINGS }, () =>
          file({ selector: { subjectId: graph.subject }, legalGround: 'art17-1a' }),
        ),
      );
      for (const answer of answers) expect([200, 202], answer.body).toContain(answer.statusCode);
      const ids = new Set(answers.map((a) => a.json<{ id: string }>().id));
      expect(ids.size).toBe(1);
      requestId = [...ids][0]!;
      // Exactly one of them created the request; the others were answered with it.
      expect(answers.filter((a) => a.statusCode === 202)).toHaveLength(1);
      await waitForState(app, graph.tenant, requestId, FINISHED);
    }, 150_000);

    it('run as one workflow execution that completes', async () => {
      const request = await app.services.erasureRequests.get(graph.tenant, requestId);
      expect(request?.state).toBe('completed');
      const runs = await closedRunsOf(requestId);
      expect(runs).toEqual([{ runId: expect.any(String) as string, status: 'COMPLETED' }]);
    });

    it('issue exactly one certificate', async () => {
      const certificates = await app.services.certificates.byRequest(graph.tenant, requestId);
      expect(certificates).toHaveLength(1);
      expect(certificates[0]!.status).toBe('complete');
      expect((await app.services.erasureRequests.get(graph.tenant, requestId))?.certificateIds).toEqual([
        certificates[0]!.certificateId,
      ]);
    });

    it('write each audit entry of the request once', async () => {
      expect(await auditCounts(requestId)).toEqual({
        'erasure.authorised': 1,
        'erasure.marked-deleted': 1,
        'erasure.certified': 1,
      });
    });

    it('once the request finished, open a new request when filed again', async () => {
      const again = await file({ selector: { subjectId: graph.subject }, legalGround: 'art17-1a' });
      expect(again.statusCode, again.body).toBe(202);
      const newId = again.json<{ id: string }>().id;
      expect(newId).not.toBe(requestId);
      const finished = await waitForState(app, graph.tenant, newId, FINISHED);
      expect(finished.state).toBe('completed');
      // The first request is untouched: still one run, one certificate, each audit entry once.
      expect(await closedRunsOf(requestId)).toHaveLength(1);
      expect(await app.services.certificates.byRequest(graph.tenant, requestId)).toHaveLength(1);
      expect(await auditCounts(requestId)).toEqual({
        'erasure.authorised': 1,
        'erasure.marked-deleted': 1,
        'erasure.certified': 1,
      });
    });
  });

  describe('filings with one request key', () => {
    const requestKey = `ticket-${randomUUID()}`;
    let requestId: string;

    beforeAll(async () => {
      // The key names the request, whatever else the filings say.
      const answers = await Promise.all([
        ...Array.from({ length: 5 }, () =>
          file({ selector: { subjectId: graph.other }, legalGround: 'art17-1a', requestKey }),
        ),
        ...Array.from({ length: 5 }, () =>
          file({ selector: { subjectId: graph.other }, legalGround: 'art17-1b', requestKey }),
        ),
      ]);
      for (const answer of answers) expect([200, 202], answer.body).toContain(answer.statusCode);
      const ids = new Set(answers.map((a) => a.json<{ id: string }>().id));
      expect(ids.size).toBe(1);
      requestId = [...ids][0]!;
      expect(answers.filter((a) => a.statusCode === 202)).toHaveLength(1);
      await waitForState(app, graph.tenant, requestId, FINISHED);
    }, 150_000);

    it('return the same request, which completes once', async () => {
      expect((await app.services.erasureRequests.get(graph.tenant, requestId))?.state).toBe('completed');
      expect(await closedRunsOf(requestId)).toEqual([{ runId: expect.any(String) as string, status: 'COMPLETED' }]);
      expect(await app.services.certificates.byRequest(graph.tenant, requestId)).toHaveLength(1);
    });

    it('return the finished request when filed again, without running it again', async () => {
      const before = await app.services.erasureRequests.get(graph.tenant, requestId);
      // Describing the workflow by id is strongly consistent and answers its latest run: a run the filing started
      // would be that run by the time the filing answered (the start is acknowledged before the API responds).
      const handle = app.worker.client.workflow.getHandle(erasureWorkflowId(graph.tenant, requestId));
      const finished = await handle.describe();
      const again = await file({ selector: { subjectId: graph.other }, legalGround: 'art17-1a', requestKey });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json<{ id: string; state: string }>()).toMatchObject({ id: requestId, state: 'completed' });
      const latest = await handle.describe();
      expect({ runId: latest.runId, status: latest.status.name }).toEqual({
        runId: finished.runId,
        status: 'COMPLETED',
      });
      const runs = await closedRunsOf(requestId);
      expect(runs).toHaveLength(1);
      expect(runs[0]!.status).toBe('COMPLETED');
      const after = await app.services.erasureRequests.get(graph.tenant, requestId);
      expect(after?.state).toBe('completed');
      expect(after?.steps).toEqual(before?.steps);
      expect(await app.services.certificates.byRequest(graph.tenant, requestId)).toHaveLength(1);
      expect(await auditCounts(requestId)).toEqual({
        'erasure.authorised': 1,
        'erasure.marked-deleted': 1,
        'erasure.certified': 1,
      });
    });
  });
});
