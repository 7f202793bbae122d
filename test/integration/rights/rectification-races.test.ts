/**
 * A rectification under hostile and unlucky timing, on the real stack: two reviewers deciding at once, a decision
 * racing an erasure of the subject, a decision's activity retried after it landed, and a derived record the
 * rectification-derived policy erases rather than flags.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, completeErasure, fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleMemory } from '../../support/samples.js';
import { createAllActivities } from '../../../app/worker/activities.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { Role } from '../../../src/governance/auth/principal.js';

interface RectificationView {
  id: string;
  state: string;
  correctedId: string | null;
  derived: { stale: string[]; erased: string[] };
  erasureRequestId: string | null;
}

describe('a rectification under races', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const rights = (tenant: string) => `/v1/tenants/${tenant}/subject-rights/rectification`;
  const as = async (tenant: string, roles: Role[], principal: string) => app.token(tenant, roles, principal);
  const file = async (tenant: string, memoryId: string, content: string) => {
    const filed = await app.request({
      method: 'POST',
      url: rights(tenant),
      token: await as(tenant, ['dpo'], 'dora'),
      payload: { requestKey: randomUUID(), memoryId, content },
    });
    expect(filed.statusCode, filed.body).toBe(202);
    return filed.json<RectificationView>().id;
  };
  const decide = async (tenant: string, id: string, reviewer: string, decision: 'approve' | 'reject') =>
    app.request({
      method: 'POST',
      url: `${rights(tenant)}/${id}/decision`,
      token: await as(tenant, ['reviewer'], reviewer),
      payload: { decision, reason: `decided by ${reviewer}` },
    });

  it('has one winner when two reviewers decide at once, and writes the correction once', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `zr${randomUUID().slice(0, 8)}`);
    const id = await file(tenant, graph.memories[1]!, 'Ana wants invoices by post.');
    const [a, b] = await Promise.all([decide(tenant, id, 'rita', 'approve'), decide(tenant, id, 'ravi', 'reject')]);
    const codes = [a.statusCode, b.statusCode].sort();
    expect(codes, `${a.body} ${b.body}`).toEqual([200, 409]);
    const winner = (a.statusCode === 200 ? a : b).json<RectificationView>();
    const stored = await app.services.rectifications.get(tenant, id);
    expect(stored?.state).toBe(winner.state);
    const corrected = await app.runtime.db
      .collection(Collections.memories)
      .countDocuments({ tenant, _id: `mem_${id}` } as never);
    expect(corrected).toBe(winner.state === 'applied' ? 1 : 0);
    const decisions = await app.runtime.db
      .collection(Collections.audit)
      .countDocuments({ tenant, target: id, action: { $in: ['rectification.applied', 'rectification.rejected'] } });
    expect(decisions).toBe(1);
  });

  it('reports the decision a retried activity finds landed, and writes nothing twice', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `zr${randomUUID().slice(0, 8)}`);
    const id = await file(tenant, graph.memories[1]!, 'Ana wants invoices by post.');
    expect((await decide(tenant, id, 'rita', 'approve')).statusCode).toBe(200);
    // The worker's own activities, called again as a retry after the decision landed would call them.
    const activities = createAllActivities(app.runtime, app.services);
    const again = await activities.decideRectification({
      tenant,
      requestId: id,
      reviewer: 'rita',
      decision: 'approve',
      reasonHash: 'h',
    });
    expect(again).toMatchObject({ state: 'applied', correctedId: `mem_${id}` });
    expect(
      await app.runtime.db.collection(Collections.audit).countDocuments({ tenant, action: 'rectification.applied' }),
    ).toBe(1);
    const old = await app.services.memories.get(tenant, graph.memories[1]!);
    expect(old?.status).toBe('superseded');
  });

  it('never leaves a correction of an erased subject behind, whichever of the decision and the erasure wins', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `zr${randomUUID().slice(0, 8)}`);
    const id = await file(tenant, graph.memories[1]!, `Ana wants invoices by post; ${graph.canary}.`);
    const [erasureId, decided] = await Promise.all([
      fileErasure(app, tenant, { subjectId: graph.subject }),
      decide(tenant, id, 'rita', 'approve'),
    ]);
    // Either the decision landed first (its record is then the erasure's to find) or it lost to the erasure's fence.
    expect([200, 409], decided.body).toContain(decided.statusCode);
    const erasure = await waitForState(app, tenant, erasureId, ['completed', 'needs-dpo', 'needs-operator'], 180_000);
    expect(['completed', 'needs-dpo'], `${erasure.state}: ${erasure.operatorNote}`).toContain(erasure.state);
    const about = await app.runtime.db
      .collection(Collections.memories)
      .find({ tenant, subjects: graph.subject })
      .project({ _id: 1, status: 1 })
      .toArray();
    const live = about.filter((m) => !['deleted', 'purged'].includes(m.status as string));
    expect(live, JSON.stringify(about)).toEqual([]);
    expect(await app.services.memories.get(tenant, `mem_${id}`)).toBeNull();
    expect(await app.services.rectifications.contentOf(tenant, id)).toBeNull();
  }, 240_000);

  it('erases a derived record the policy erases, by an erasure of its own on the correction ground', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `zr${randomUUID().slice(0, 8)}`);
    const record = graph.memories[1]!;
    // A special-category note derived from the record (it waits for sign-off; the closure reaches it all the same).
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await as(tenant, ['agent'], graph.writer),
      payload: {
        events: [],
        memories: [
          sampleMemory({
            subjects: [graph.subject],
            kind: 'note',
            attribute: 'billing-health',
            sensitivity: 'special',
            content: 'Ana asked for e-mail invoices because of a condition she mentioned.',
            provenance: { eventIds: [], parentIds: [record], derivationRule: 'summarise' },
          }),
        ],
      },
    });
    expect(written.statusCode, written.body).toBe(201);
    const special = written.json<{ memories: { id: string }[] }>().memories[0]!.id;
    const id = await file(tenant, record, 'Ana wants invoices by post.');
    const decided = await decide(tenant, id, 'rita', 'approve');
    expect(decided.statusCode, decided.body).toBe(200);
    const view = decided.json<RectificationView>();
    expect(view.derived.erased).toEqual([special]);
    expect(view.derived.stale).not.toContain(special);
    expect(view.erasureRequestId).toBeTruthy();
    const erasure = await completeErasure(app, tenant, view.erasureRequestId!, 'certify');
    expect(erasure.state).toBe('completed');
    expect(erasure.legalGround).toBe('correction');
    expect(await app.services.memories.get(tenant, special)).toBeNull();
    // The inaccurate value itself was kept in history (the DPO did not ask for its erasure), superseded.
    expect((await app.services.memories.get(tenant, record))?.status).toBe('superseded');
    expect((await app.services.memories.get(tenant, view.correctedId!))?.status).toBe('active');
  }, 240_000);
});
