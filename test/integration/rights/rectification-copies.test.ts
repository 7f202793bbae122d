/**
 * A rectification reaches every copy of the wrong value, on the real stack. Ana's invoice channel is stated wrongly
 * three times: the record the DPO names, the same words written again by a second agent (in its own scope, with a
 * summary built on it), and the same words extracted again by the first agent from the same event.
 * A note with those words under another attribute is not a copy. Filing contests every copy; approval supersedes
 * each with a correction of its own, flags what was built on any of them stale and marks the events the wrong value
 * was derived from; rejection releases every copy. An agent that names a superseded value by id is not served it
 * unless it asks for history.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, type SubjectGraph } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { createAllActivities } from '../../../app/worker/activities.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { Role } from '../../../src/governance/auth/principal.js';

interface RectificationView {
  id: string;
  state: string;
  memoryId: string;
  correctedId: string | null;
  siblings?: { memoryId: string; correctedId: string | null }[];
  derived: { stale: string[]; erased: string[] };
}

interface Shown {
  id: string;
  status: string;
  content?: string;
  contestedBy?: string[];
  stale?: { because: string };
  correctedBy?: string[];
}

const SECOND = 'second-agent';

/** Ana's wrong invoice channel written again: by a second agent, and by the graph's writer from the same event. */
async function writeCopies(app: TestApp, graph: SubjectGraph) {
  const batch = async (principal: string, body: object) => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/batches`,
      token: await app.token(graph.tenant, ['agent'], principal),
      payload: body,
    });
    expect(response.statusCode, response.body).toBe(201);
    const written = response.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
    for (const m of written.memories) expect(m.status, JSON.stringify(m)).toBe('active');
    return written;
  };
  const wrong = `Ana wants invoices by e-mail; reference ${graph.canary}.`;
  const second = await batch(SECOND, {
    events: [
      sampleEvent({
        subjects: [graph.subject],
        content: `Ana asked for invoices by e-mail; reference ${graph.canary}.`,
      }),
    ],
    memories: [
      sampleMemory({
        subjects: [graph.subject],
        attribute: 'invoice-channel',
        content: wrong,
        provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-preference' },
      }),
    ],
  });
  const copy = second.memories[0]!.id;
  const built = await batch(SECOND, {
    memories: [
      sampleMemory({
        subjects: [graph.subject],
        kind: 'summary',
        attribute: 'billing-summary',
        content: `Summary: Ana wants invoices by e-mail; reference ${graph.canary}.`,
        confidence: 0.8,
        provenance: { eventIds: [], parentIds: [copy], derivationRule: 'summarise' },
      }),
    ],
  });
  const again = await batch(graph.writer, {
    memories: [
      sampleMemory({
        subjects: [graph.subject],
        attribute: 'invoice-channel',
        content: wrong,
        provenance: { eventIds: [graph.events[1]!], parentIds: [], derivationRule: 'extract-preference' },
      }),
      sampleMemory({
        subjects: [graph.subject],
        kind: 'note',
        attribute: 'invoice-note',
        content: wrong,
        provenance: { eventIds: [graph.events[1]!], parentIds: [], derivationRule: 'extract-preference' },
      }),
    ],
  });
  return {
    copy,
    copyEvent: second.events[0]!.id,
    builtOnCopy: built.memories[0]!.id,
    rebuilt: again.memories[0]!.id,
    otherAttribute: again.memories[1]!.id,
  };
}

describe('a rectification of a value stated by several records', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let copies: Awaited<ReturnType<typeof writeCopies>>;
  let named: string;
  let requestId: string;
  const tenant = uniqueTenant();
  const corrected = 'Ana wants invoices by post.';

  const rights = (t: string) => `/v1/tenants/${t}/subject-rights/rectification`;
  const file = async (t: string, payload: object) =>
    app.request({ method: 'POST', url: rights(t), token: await app.token(t, ['dpo'], 'dora'), payload });
  const decide = async (t: string, id: string, decision: 'approve' | 'reject') =>
    app.request({
      method: 'POST',
      url: `${rights(t)}/${id}/decision`,
      token: await app.token(t, ['reviewer'], 'rita'),
      payload: { decision, reason: `decided ${decision} in the test` },
    });
  const read = async (t: string, what: 'memories' | 'events', id: string, roles: Role[], who: string, q = '') =>
    app.request({ method: 'GET', url: `/v1/tenants/${t}/${what}/${id}${q}`, token: await app.token(t, roles, who) });
  const stored = async (t: string, id: string) => (await app.services.memories.get(t, id))!;

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, tenant, `zcp${randomUUID().replaceAll('-', '').slice(0, 12)}`);
    named = graph.memories[1]!;
    copies = await writeCopies(app, graph);
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });

  it('contests every current copy of the wrong value from filing, and no other record', async () => {
    const filed = await file(tenant, { requestKey: `rec-${randomUUID()}`, memoryId: named, content: corrected });
    expect(filed.statusCode, filed.body).toBe(202);
    const view = filed.json<RectificationView>();
    requestId = view.id;
    expect(view.siblings?.map((s) => s.memoryId)).toEqual([copies.copy, copies.rebuilt].sort());
    for (const id of [named, copies.copy, copies.rebuilt])
      expect((await stored(tenant, id)).contestedBy, id).toEqual([requestId]);
    for (const id of [copies.otherAttribute, graph.memories[0]!])
      expect((await stored(tenant, id)).contestedBy ?? [], id).toEqual([]);
    // What was built on a copy repeats the value: contested with it from filing, so not served as current either.
    expect((await stored(tenant, copies.builtOnCopy)).contestedBy).toEqual([requestId]);
    expect((await read(tenant, 'memories', copies.builtOnCopy, ['agent'], SECOND)).statusCode).toBe(404);
    // The second agent is not served its copy as current any more.
    expect((await read(tenant, 'memories', copies.copy, ['agent'], SECOND, '?intent=current')).statusCode).toBe(404);
    // Whoever wrote a copy may not decide the correction.
    const byCopyWriter = await app.request({
      method: 'POST',
      url: `${rights(tenant)}/${requestId}/decision`,
      token: await app.token(tenant, ['reviewer'], SECOND),
      payload: { decision: 'approve', reason: 'my own copy' },
    });
    expect(byCopyWriter.statusCode, byCopyWriter.body).toBe(403);
  });

  it('supersedes every copy on approval, each by a correction in its own scope, and flags what was built on any', async () => {
    const approved = await decide(tenant, requestId, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    const view = approved.json<RectificationView>();
    expect(view.state).toBe('applied');
    const correctionOf = new Map((view.siblings ?? []).map((s) => [s.memoryId, s.correctedId]));
    expect([...correctionOf.keys()].sort()).toEqual([copies.copy, copies.rebuilt].sort());
    for (const [copy, correction] of [[named, view.correctedId], ...correctionOf] as [string, string][]) {
      const old = await stored(tenant, copy);
      expect(old.status, copy).toBe('superseded');
      expect(old.statusReason).toBe(`rectified-by:${correction}`);
      expect(old.contestedBy ?? []).toEqual([]);
      const now = await stored(tenant, correction);
      expect(now).toMatchObject({ status: 'active', content: corrected, scope: old.scope, subjects: old.subjects });
      expect(old.validTo?.getTime()).toBe(now.validFrom.getTime());
    }
    // The second agent holds the corrected value in its own scope, and is served it as current.
    const mine = await read(tenant, 'memories', correctionOf.get(copies.copy)!, ['agent'], SECOND);
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json<Shown>().content).toBe(corrected);
    // What was built on the second agent's copy is stale, as what was built on the named record is.
    expect(view.derived.stale).toEqual(expect.arrayContaining([copies.builtOnCopy, graph.memories[2]!]));
    expect((await stored(tenant, copies.builtOnCopy)).stale?.because).toBe(`rectification:${requestId}`);
    // Stale now, it leaves the contest: the mark that keeps it from being current is the stale flag.
    expect((await stored(tenant, copies.builtOnCopy)).contestedBy ?? []).toEqual([]);
    // The same words under another attribute are not a copy of this value.
    expect(await stored(tenant, copies.otherAttribute)).toMatchObject({ status: 'active' });
    expect((await stored(tenant, copies.otherAttribute)).stale).toBeUndefined();
  });

  it('marks the events the wrong value was derived from, and shows the mark to a duty read', async () => {
    for (const event of [graph.events[1]!, copies.copyEvent]) {
      expect((await app.services.events.get(tenant, event))?.correctedBy, event).toEqual([requestId]);
      const shown = await read(tenant, 'events', event, ['dpo'], 'dora');
      expect(shown.statusCode, shown.body).toBe(200);
      expect(shown.json<Shown>().correctedBy).toEqual([requestId]);
    }
    // The codeword's event said nothing about invoices.
    expect((await app.services.events.get(tenant, graph.events[0]!))?.correctedBy).toBeUndefined();
  });

  it('serves the superseded value by id to an agent only when it asks for history; duty reads see it as before', async () => {
    expect((await read(tenant, 'memories', named, ['agent'], graph.writer)).statusCode).toBe(404);
    expect((await read(tenant, 'memories', copies.copy, ['agent'], SECOND)).statusCode).toBe(404);
    const history = await read(tenant, 'memories', named, ['agent'], graph.writer, '?intent=history');
    expect(history.statusCode, history.body).toBe(200);
    expect(history.json<Shown>().status).toBe('superseded');
    for (const [roles, who] of [
      [['dpo'], 'dora'],
      [['reviewer'], 'rita'],
    ] as [Role[], string][]) {
      const duty = await read(tenant, 'memories', named, roles, who);
      expect(duty.statusCode, `${roles.join()}: ${duty.body}`).toBe(200);
      expect(duty.json<Shown>().status).toBe('superseded');
    }
    // The current value is what the agent is served by id without asking.
    const view = (
      await app.request({
        method: 'GET',
        url: `${rights(tenant)}/${requestId}`,
        token: await app.token(tenant, ['dpo'], 'dora'),
      })
    ).json<RectificationView>();
    expect((await read(tenant, 'memories', view.correctedId!, ['agent'], graph.writer)).statusCode).toBe(200);
  });

  it('writes nothing twice when its decision is applied again', async () => {
    // The worker's own activities, called again as a retry after the decision landed would call them.
    const activities = createAllActivities(app.runtime, app.services);
    const again = await activities.decideRectification({
      tenant,
      requestId,
      reviewer: 'rita',
      decision: 'approve',
      reasonHash: 'h',
    });
    expect(again).toMatchObject({ state: 'applied', correctedId: `mem_${requestId}`, siblings: 2 });
    const corrections = await app.runtime.db
      .collection(Collections.memories)
      .countDocuments({ tenant, statusReason: `rectification:${requestId}` });
    expect(corrections).toBe(3);
    expect(
      await app.runtime.db.collection(Collections.audit).countDocuments({ tenant, action: 'rectification.applied' }),
    ).toBe(1);
  });

  it('releases every copy when the correction is rejected, named by its subject and attribute', async () => {
    const other = uniqueTenant();
    const otherGraph = await buildSubjectGraph(app, other, `zcq${randomUUID().replaceAll('-', '').slice(0, 12)}`);
    const otherCopies = await writeCopies(app, otherGraph);
    // Three current records of Ana's invoice channel, all stating one value: the earliest is named, the rest reached.
    const filed = await file(other, {
      requestKey: `rec-${randomUUID()}`,
      subjectId: otherGraph.subject,
      attribute: 'invoice-channel',
      content: corrected,
    });
    expect(filed.statusCode, filed.body).toBe(202);
    const view = filed.json<RectificationView>();
    expect(view.memoryId).toBe(otherGraph.memories[1]);
    expect(view.siblings?.map((s) => s.memoryId)).toEqual([otherCopies.copy, otherCopies.rebuilt].sort());
    const all = [otherGraph.memories[1]!, otherCopies.copy, otherCopies.rebuilt];
    for (const id of [...all, otherCopies.builtOnCopy])
      expect((await stored(other, id)).contestedBy, id).toEqual([view.id]);
    expect((await read(other, 'memories', otherCopies.builtOnCopy, ['agent'], SECOND)).statusCode).toBe(404);
    const rejected = await decide(other, view.id, 'reject');
    expect(rejected.statusCode, rejected.body).toBe(200);
    for (const id of [...all, otherCopies.builtOnCopy]) {
      const record = await stored(other, id);
      expect(record.contestedBy ?? [], id).toEqual([]);
      expect(record.status).toBe('active');
    }
    expect((await read(other, 'memories', otherCopies.copy, ['agent'], SECOND)).statusCode).toBe(200);
    // What was built on the copy is current again too.
    expect((await read(other, 'memories', otherCopies.builtOnCopy, ['agent'], SECOND)).statusCode).toBe(200);
    for (const event of otherGraph.events)
      expect((await app.services.events.get(other, event))?.correctedBy).toBeUndefined();
  }, 240_000);
});
