/**
 * One read policy on every route: each leak found on the read side, tried as the caller who should not see the
 * record. Every refusal is compared with what a missing record gets; every permitted read is a positive control.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { Role } from '../../../src/governance/auth/principal.js';

describe('one read policy on every route', () => {
  let app: TestApp;
  let tenant: string;
  const canary = (name: string) => `cn${name}${randomUUID().slice(0, 8)}`;
  const c = {
    annEvent: canary('annevt'),
    ann: canary('ann'),
    stale: canary('stale'),
    benInternal: canary('benint'),
    benConfidential: canary('bencnf'),
  };
  const ids: Record<string, string> = {};

  async function write(principal: string, events: object[], memories: object[]) {
    // Each memory cites an event of its own that states it, after the given events: the derivation audit admits it.
    const stating = (memories as { content: string; subjects?: string[] }[]).map((m) =>
      sampleEvent({ content: `Noted: ${m.content}`, ...(m.subjects ? { subjects: m.subjects } : {}) }),
    );
    const cited = (memories as object[]).map((m, i) => ({
      ...m,
      provenance: { eventIds: [`#${events.length + i}`], parentIds: [], derivationRule: 'extract-note' },
    }));
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], principal),
      payload: { events: [...events, ...stating], memories: cited },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
  }
  const get = async (url: string, roles: Role[], principal: string) =>
    app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}${url}`,
      token: await app.token(tenant, roles, principal),
    });
  const post = async (url: string, roles: Role[], principal: string, payload: object) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}${url}`,
      token: await app.token(tenant, roles, principal),
      payload,
    });
  const memoryIdsOf = (body: string) =>
    (JSON.parse(body) as { results?: { memory: { id: string } }[]; items?: { id: string }[] }).results?.map(
      (r) => r.memory.id,
    ) ?? (JSON.parse(body) as { items: { id: string }[] }).items.map((i) => i.id);

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    const note = (content: string, over: Record<string, unknown> = {}) =>
      sampleMemory({ kind: 'note', attribute: `note-${randomUUID().slice(0, 6)}`, content, ...over });
    const ann = await write(
      'ann',
      [sampleEvent({ content: `Ann heard the depot code ${c.annEvent} on the phone.` })],
      [
        note(`Depot code note ${c.ann}.`),
        note(`Depot code note that ended ${c.stale}.`, {
          validFrom: '2024-01-01T00:00:00Z',
          validTo: '2025-01-01T00:00:00Z',
        }),
      ],
    );
    ids.annEvent = ann.events[0]!.id;
    ids.ann = ann.memories[0]!.id;
    ids.stale = ann.memories[1]!.id;
    const ben = await write(
      'ben',
      [sampleEvent({ content: 'Ben logged a call.' })],
      [
        note(`Depot code note ${c.benInternal}.`),
        note(`Depot code note ${c.benConfidential}.`, { sensitivity: 'confidential' }),
      ],
    );
    ids.benInternal = ben.memories[0]!.id;
    ids.benConfidential = ben.memories[1]!.id;
    for (const m of [...ann.memories, ...ben.memories]) expect(m.status).toBe('active');
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });

  it('shows an auditor an event as ids and hashes, never its content or subjects', async () => {
    const audited = await get(`/events/${ids.annEvent}`, ['auditor'], 'aud-1');
    expect(audited.statusCode, audited.body).toBe(200);
    expect(audited.json()).toMatchObject({ id: ids.annEvent, view: 'content-free', contentHash: expect.any(String) });
    expect(audited.body).not.toContain(c.annEvent);
    expect(audited.json()).not.toHaveProperty('subjects');
    // Positive control: the writer reads its own event's content.
    const own = await get(`/events/${ids.annEvent}`, ['agent'], 'ann');
    expect(own.json()).toMatchObject({ view: 'content', content: expect.stringContaining(c.annEvent) });
  });

  it("never serves another agent's memory through search, and serves the writer its own", async () => {
    const query = { query: 'depot code note', k: 50, intent: 'history' };
    const annSees = await post('/search', ['agent'], 'ann', query);
    expect(memoryIdsOf(annSees.body)).toEqual(expect.arrayContaining([ids.ann, ids.stale]));
    const benSees = await post('/search', ['agent'], 'ben', query);
    expect(benSees.statusCode).toBe(200);
    expect(memoryIdsOf(benSees.body).sort()).toEqual([ids.benInternal, ids.benConfidential].sort());
    expect(benSees.body).not.toContain(c.ann);
    expect(benSees.body).not.toContain(c.stale);
  });

  it("answers another agent's memory or event by id exactly as a missing one", async () => {
    const missingMemory = await get(`/memories/mem_${randomUUID().replace(/-/g, '')}`, ['agent'], 'ben');
    const foreignMemory = await get(`/memories/${ids.ann}`, ['agent'], 'ben');
    expect(missingMemory.statusCode).toBe(404);
    expect({ status: foreignMemory.statusCode, body: foreignMemory.body }).toEqual({
      status: 404,
      body: missingMemory.body,
    });
    const missingEvent = await get(`/events/evt_${randomUUID().replace(/-/g, '')}`, ['agent'], 'ben');
    const foreignEvent = await get(`/events/${ids.annEvent}`, ['agent'], 'ben');
    expect({ status: foreignEvent.statusCode, body: foreignEvent.body }).toEqual({
      status: 404,
      body: missingEvent.body,
    });
    // Too sensitive for the purpose answers the same: no oracle for existence or sensitivity.
    const tooSensitive = await get(`/memories/${ids.benConfidential}`, ['admin'], 'op-1');
    expect({ status: tooSensitive.statusCode, body: tooSensitive.body }).toEqual({
      status: 404,
      body: (await get(`/memories/mem_${randomUUID().replace(/-/g, '')}`, ['admin'], 'op-1')).body,
    });
  });

  it('never serves a fact whose valid time has ended for a current question, on any route', async () => {
    const current = { query: 'depot code note ended', k: 50 };
    for (const route of ['/search', '/retrieve']) {
      const now = await post(route, ['agent'], 'ann', { ...current, intent: 'current' });
      expect(now.statusCode, now.body).toBe(200);
      expect(memoryIdsOf(now.body)).toContain(ids.ann);
      expect(memoryIdsOf(now.body)).not.toContain(ids.stale);
      const history = await post(route, ['agent'], 'ann', { ...current, intent: 'history' });
      expect(memoryIdsOf(history.body)).toContain(ids.stale);
    }
    expect((await get(`/memories/${ids.stale}?intent=current`, ['agent'], 'ann')).statusCode).toBe(404);
    // By id, an agent's read is about the present unless it asks for history.
    expect((await get(`/memories/${ids.stale}`, ['agent'], 'ann')).statusCode).toBe(404);
    const byId = await get(`/memories/${ids.stale}?intent=history`, ['agent'], 'ann');
    expect(byId.json()).toMatchObject({ id: ids.stale, validTo: '2025-01-01T00:00:00.000Z' });
  });

  it('gives a token with two roles the union of its grants, never their cross-product', async () => {
    const both: Role[] = ['agent', 'admin'];
    const own = await write(
      'carl',
      [sampleEvent()],
      [
        sampleMemory({
          kind: 'note',
          attribute: 'c',
          content: `Carl's own note ${canary('carl')}.`,
          sensitivity: 'confidential',
        }),
      ],
    );
    // support: confidential in its own scope; operations: internal tenant-wide.
    expect((await get(`/memories/${own.memories[0]!.id}`, both, 'carl')).statusCode).toBe(200);
    expect((await get(`/memories/${ids.benInternal}`, both, 'carl')).statusCode).toBe(200);
    // Neither grants confidential records of another principal.
    const refused = await get(`/memories/${ids.benConfidential}`, both, 'carl');
    expect(refused.statusCode).toBe(404);
    expect(refused.body).not.toContain(c.benConfidential);
    const searched = await post('/search', both, 'carl', { query: 'depot code note', k: 50, intent: 'history' });
    expect(searched.body).toContain(c.benInternal);
    expect(searched.body).not.toContain(c.benConfidential);
    // A purpose named in the request selects one grant: operations alone does not read its own confidential note.
    expect((await get(`/memories/${own.memories[0]!.id}?purpose=operations`, both, 'carl')).statusCode).toBe(404);
  });

  it('shows a reviewer a dispute side an erasure reached by its id only', async () => {
    const subject = `subject-${randomUUID().slice(0, 6)}`;
    const employer = (content: string, validFrom: string) =>
      sampleMemory({ subjects: [subject], kind: 'fact', attribute: 'employer', content, validFrom, scope: 'tenant' });
    const first = await write(
      'ann',
      [sampleEvent({ subjects: [subject], content: 'Works at Acme Corp.' })],
      [employer(`Works at Acme Corp ${canary('acme')}.`, '2024-01-01T00:00:00Z')],
    );
    const erasedCanary = canary('globex');
    const second = await write(
      'ben',
      [sampleEvent({ subjects: [subject], content: 'Works at Globex Ltd.' })],
      [employer(`Works at Globex Ltd ${erasedCanary}.`, '2025-06-01T00:00:00Z')],
    );
    expect(second.memories[0]!.status).toBe('disputed');
    const [dispute] = [...(await app.services.disputes.openForMany(tenant, [second.memories[0]!.id])).values()].flat();
    expect(dispute).toBeDefined();
    const before = await get(`/disputes/${dispute!._id}`, ['reviewer'], 'rita');
    expect(before.body).toContain(erasedCanary);
    expect(
      await app.services.memories.transition(tenant, second.memories[0]!.id, 'disputed', 'deleted', 'test:erasure'),
    ).toBe(true);
    const after = await get(`/disputes/${dispute!._id}`, ['reviewer'], 'rita');
    expect(after.statusCode).toBe(200);
    expect(after.body).not.toContain(erasedCanary);
    const records = after.json<{ records: { id: string; view: string }[] }>().records;
    expect(records.find((r) => r.id === second.memories[0]!.id)).toEqual({
      id: second.memories[0]!.id,
      view: 'withheld',
    });
    expect(records.find((r) => r.id === first.memories[0]!.id)).toMatchObject({ view: 'content' });
  });

  it('knows what every route hands back: the routes that present records are exactly the judged ones', async () => {
    const judged = [
      'GET /v1/tenants/:tenant/events/:id',
      'GET /v1/tenants/:tenant/memories/:id',
      'POST /v1/tenants/:tenant/search',
      'POST /v1/tenants/:tenant/retrieve',
      'GET /v1/tenants/:tenant/review-queue/:id',
      'GET /v1/tenants/:tenant/disputes/:id',
      // The DPO's access package: built under the read policy's access-request purpose, downloaded whole.
      'GET /v1/tenants/:tenant/subject-rights/access/:id/package',
      // The corrected content an open correction proposes: the filing DPO's words, for the reviewer who decides.
      'GET /v1/tenants/:tenant/subject-rights/rectification/:id/proposal',
    ];
    const presenting = app.api.tenantRoutes.filter((r) => r.reads === 'records').map((r) => `${r.method} ${r.url}`);
    expect(presenting.sort()).toEqual([...judged].sort());
    // And the read table in docs/rules.md names each of them (a new one must be added there, and to the red team).
    const readme = await import('node:fs/promises').then((fs) => fs.readFile('docs/rules.md', 'utf8'));
    for (const route of presenting) expect(readme, route).toContain(`\`${route.replace('/v1/tenants/:tenant', '…')}\``);
  });

  it('traces every read of content by search or by id as a retrieval of those ids', async () => {
    const principal = `reader-${randomUUID().slice(0, 6)}`;
    const own = await write(
      principal,
      [sampleEvent({ content: `Traced event ${canary('tr')}.` })],
      [sampleMemory({ kind: 'note', attribute: 't', content: `Traced depot note ${canary('tm')}.` })],
    );
    const [memoryId, eventId] = [own.memories[0]!.id, own.events[0]!.id];
    expect(memoryIdsOf((await post('/search', ['agent'], principal, { query: 'traced depot note' })).body)).toContain(
      memoryId,
    );
    expect((await get(`/memories/${memoryId}`, ['agent'], principal)).statusCode).toBe(200);
    expect((await get(`/events/${eventId}`, ['agent'], principal)).statusCode).toBe(200);
    // A refused read hands out nothing and traces nothing.
    expect((await get(`/memories/${memoryId}`, ['agent'], 'somebody-else')).statusCode).toBe(404);

    const routesOf = async (id: string) => {
      const found = await app.services.exposures.exposuresOf(tenant, id);
      const retrievals = await app.runtime.db
        .collection<{ _id: string; route?: string; principal: string }>(Collections.retrievals)
        .find({ _id: { $in: found.map((f) => f.retrievalId) } })
        .toArray();
      return retrievals.map((r) => `${r.principal}:${r.route}`).sort();
    };
    expect(await routesOf(memoryId)).toEqual([`${principal}:memory`, `${principal}:search`]);
    expect(await routesOf(eventId)).toEqual([`${principal}:event`]);
    // The DPO sees them through the API too.
    const listed = await get(`/memories/${memoryId}/exposures`, ['dpo'], 'dpo-1');
    expect(listed.json<{ retrievals: unknown[] }>().retrievals).toHaveLength(2);
  });
});
