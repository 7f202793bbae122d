import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import {
  buildSubjectGraph,
  completeErasure,
  fileErasure,
  waitForState,
  type SubjectGraph,
} from '../../support/erasure-fixture.js';

interface Summary {
  id: string;
  state: string;
  dueAt: string;
  overdue: boolean;
  extensionMonths: number;
  holdIds: string[];
  receivedAt: string;
  closedAt: string | null;
}

/** The lists the consoles read: a tenant's erasure requests (the DPO's clock) and its active holds (legal). */
describe('listing erasure requests and legal holds', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let holdId: string;
  let heldRequest: string;
  let otherRequest: string;
  let dpo: string;
  let legal: string;

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    dpo = await app.token(graph.tenant, ['dpo'], 'dpo-1');
    legal = await app.token(graph.tenant, ['legal'], 'counsel-1');
    const placed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/legal-holds`,
      token: legal,
      payload: { scope: { recordIds: [graph.memories[0]!] }, caseRef: 'case-lists' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    holdId = placed.json<{ id: string }>().id;
    heldRequest = await fileErasure(app, graph.tenant, { subjectId: graph.subject });
    expect((await waitForState(app, graph.tenant, heldRequest, ['partial', 'completed'])).state).toBe('partial');
    otherRequest = await fileErasure(app, graph.tenant, { memoryIds: [graph.control[1]!] }, 'art17-1b');
    // Ben's memory repeats the event it was extracted from: the DPO certifies with that copy stated.
    expect((await completeErasure(app, graph.tenant, otherRequest, 'certify')).state).toBe('completed');
  }, 240_000);
  afterAll(async () => {
    await app?.close();
  });

  it("lists a tenant's requests newest first with state, due date and flags, and no selector values", async () => {
    // A request past its due date and not finished is overdue.
    await app.services.erasureRequests.update(graph.tenant, heldRequest, { dueAt: new Date(Date.now() - 60_000) });
    const listed = await app.request({
      method: 'GET',
      url: `/v1/tenants/${graph.tenant}/erasure-requests`,
      token: dpo,
    });
    expect(listed.statusCode, listed.body).toBe(200);
    const items = listed.json<{ items: Summary[] }>().items;
    expect(items.map((i) => i.id)).toEqual([otherRequest, heldRequest]);
    expect(items[0]).toMatchObject({ state: 'completed', overdue: false, extensionMonths: 0 });
    expect(Date.parse(items[0]!.closedAt!)).toBeGreaterThanOrEqual(Date.parse(items[0]!.receivedAt));
    expect(items[1]).toMatchObject({ state: 'partial', overdue: true, holdIds: [holdId], closedAt: null });
    expect(listed.body).not.toContain(graph.subject);
    expect(listed.body).not.toContain(graph.control[1]!);

    const limited = await app.request({
      method: 'GET',
      url: `/v1/tenants/${graph.tenant}/erasure-requests?limit=1`,
      token: await app.token(graph.tenant, ['auditor'], 'aud-1'),
    });
    expect(limited.json<{ items: Summary[] }>().items.map((i) => i.id)).toEqual([otherRequest]);
  });

  it('refuses the list to a reviewer (403) and an out-of-range limit (400 naming it)', async () => {
    const refused = await app.request({
      method: 'GET',
      url: `/v1/tenants/${graph.tenant}/erasure-requests`,
      token: await app.token(graph.tenant, ['reviewer'], 'rita'),
    });
    expect(refused.statusCode).toBe(403);
    const bad = await app.request({
      method: 'GET',
      url: `/v1/tenants/${graph.tenant}/erasure-requests?limit=0`,
      token: dpo,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { field: string } }>().error.field).toBe('limit');
  });

  it('lists active holds with the requests each keeps waiting, to the legal role only; a released hold leaves the list', async () => {
    const listed = await app.request({ method: 'GET', url: `/v1/tenants/${graph.tenant}/legal-holds`, token: legal });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json<{ items: unknown[] }>().items).toEqual([
      expect.objectContaining({
        id: holdId,
        scopeKind: 'records',
        caseRef: 'case-lists',
        active: true,
        blocks: [heldRequest],
      }),
    ]);
    expect(listed.body).not.toContain(graph.memories[0]!);
    const asDpo = await app.request({ method: 'GET', url: `/v1/tenants/${graph.tenant}/legal-holds`, token: dpo });
    expect(asDpo.statusCode).toBe(403);

    const released = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/legal-holds/${holdId}/release`,
      token: legal,
    });
    expect(released.statusCode, released.body).toBe(200);
    const after = await app.request({ method: 'GET', url: `/v1/tenants/${graph.tenant}/legal-holds`, token: legal });
    expect(after.json<{ items: unknown[] }>().items).toEqual([]);
    await waitForState(app, graph.tenant, heldRequest, ['completed']);
  });
});
