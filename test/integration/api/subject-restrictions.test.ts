/**
 * Restriction of processing (Art. 18) and objection to purposes (Art. 21), filed by the DPO: from the filing on,
 * no agent route serves the subject's records (or not for the objected purposes), another subject's records are
 * still served, duty reads see them marked, and a lift restores service. Tried through every route an agent reads.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { subjectNotesBatch, subjectNotesWritten, type SubjectNote } from '../../support/subject-notes.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { createMongoRestrictionStore } from '../../../src/governance/rights/restriction-store.js';
import type { Role } from '../../../src/governance/auth/principal.js';

describe('restriction of processing and objection to purposes', () => {
  let app: TestApp;
  let tenant: string;
  const term = `parcel${randomUUID().slice(0, 6)}`;
  /** One subject per behaviour, each with a memory and an event; `other` is the canary that must stay served. */
  const subjects = {
    restricted: `subj-r-${randomUUID().slice(0, 6)}`,
    objected: `subj-o-${randomUUID().slice(0, 6)}`,
    other: `subj-c-${randomUUID().slice(0, 6)}`,
  };
  const records = {} as Record<keyof typeof subjects, SubjectNote>;

  const call = async (
    method: 'GET' | 'POST',
    url: string,
    roles: Role[],
    principal: string,
    payload?: object,
    purposes?: string[],
  ) =>
    app.request({
      method,
      url: `/v1/tenants/${tenant}${url}`,
      token: await app.token(tenant, roles, principal, 600, purposes),
      ...(payload ? { payload } : {}),
    });
  const file = (payload: object, roles: Role[] = ['dpo']) =>
    call('POST', '/subject-rights/restrictions', roles, 'dora', payload);
  const lift = (id: string) =>
    call('POST', `/subject-rights/restrictions/${id}/lift`, ['dpo'], 'dora', { reason: 'the subject withdrew it' });

  /**
   * The memory and event ids agent ann is served about `who`, through each route she reads, for `purpose`, under a
   * token granting `granted` (absent: a token naming no purposes, which grants every purpose her role may read for).
   */
  async function servedToAgent(who: keyof typeof subjects, purpose?: string, granted?: string[]) {
    const p = purpose ? { purpose } : {};
    const q = purpose ? `?purpose=${purpose}` : '';
    const search = await call('POST', '/search', ['agent'], 'ann', { query: term, k: 50, ...p }, granted);
    const retrieve = await call('POST', '/retrieve', ['agent'], 'ann', { query: term, k: 50, ...p }, granted);
    const memory = await call('GET', `/memories/${records[who].memory}${q}`, ['agent'], 'ann', undefined, granted);
    const event = await call('GET', `/events/${records[who].event}${q}`, ['agent'], 'ann', undefined, granted);
    for (const r of [search, retrieve]) expect(r.statusCode, r.body).toBe(200);
    const mine = (ids: string[]) => ids.filter((id) => id === records[who].memory);
    return {
      search: mine(search.json<{ results: { memory: { id: string } }[] }>().results.map((r) => r.memory.id)).length,
      retrieve: mine(retrieve.json<{ items: { id: string }[] }>().items.map((i) => i.id)).length,
      memory: memory.statusCode === 200 ? 1 : 0,
      event: event.statusCode === 200 ? 1 : 0,
      canarySeen: [search, retrieve, memory, event].some((r) => r.body.includes(records[who].canary)),
    };
  }
  const everywhere = { search: 1, retrieve: 1, memory: 1, event: 1, canarySeen: true };
  const nowhere = { search: 0, retrieve: 0, memory: 0, event: 0, canarySeen: false };

  const storedIn = async (tenantId: string) =>
    app.runtime.db.collection(Collections.restrictions).countDocuments({ tenant: tenantId });
  const auditActions = async (tenantId: string) =>
    (
      await app.runtime.db
        .collection<{ action: string; details?: Record<string, unknown> }>(Collections.audit)
        .find({ tenant: tenantId, action: /^restriction\./ })
        .toArray()
    ).map((e) => ({ action: e.action, details: e.details }));

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    const { payload, canaries } = subjectNotesBatch(term, subjects);
    Object.assign(records, subjectNotesWritten(await call('POST', '/batches', ['agent'], 'ann', payload), canaries));
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });

  it("from the filing on, no agent route serves a restricted subject's records; another subject's still are; a lift restores them", async () => {
    expect(await servedToAgent('restricted')).toEqual(everywhere);
    const filed = await file({
      selector: { subjectId: subjects.restricted },
      legalGround: 'art18-1a',
      reason: 'the subject contests the accuracy of the delivery notes',
      requestKey: `rk-${randomUUID()}`,
    });
    expect(filed.statusCode, filed.body).toBe(201);
    const restriction = filed.json<{ id: string; kind: string; subjectHash: string; active: boolean }>();
    expect(restriction).toMatchObject({ kind: 'restriction', active: true, subjectHash: expect.any(String) });
    expect(filed.body).not.toContain(subjects.restricted);

    // The very next read, with no wait: the effect is immediate.
    expect(await servedToAgent('restricted')).toEqual(nowhere);
    expect(await servedToAgent('restricted', 'personalisation')).toEqual(nowhere);
    expect(await servedToAgent('other')).toEqual(everywhere);

    // Duty reads still see the records, marked.
    const dpoRead = await call('GET', `/memories/${records.restricted.memory}`, ['dpo'], 'dora');
    expect(dpoRead.statusCode, dpoRead.body).toBe(200);
    expect(dpoRead.json()).toMatchObject({
      content: expect.stringContaining(records.restricted.canary),
      restriction: { restricted: true, objectedPurposes: [] },
    });
    const legalRead = await call('GET', `/events/${records.restricted.event}`, ['legal'], 'lena');
    expect(legalRead.statusCode, legalRead.body).toBe(200);
    expect(legalRead.json()).toMatchObject({ view: 'content', restriction: { restricted: true } });
    const legalRetrieve = await call('POST', '/retrieve', ['legal'], 'lena', { query: term, k: 50 });
    expect(legalRetrieve.json<{ items: { id: string }[] }>().items.map((i) => i.id)).toContain(
      records.restricted.memory,
    );
    // A duty read of an unrestricted subject carries no mark.
    expect((await call('GET', `/memories/${records.other.memory}`, ['dpo'], 'dora')).json()).not.toHaveProperty(
      'restriction',
    );

    const lifted = await lift(restriction.id);
    expect(lifted.statusCode, lifted.body).toBe(200);
    expect(lifted.json()).toMatchObject({ active: false, liftedBy: 'dora' });
    expect(await servedToAgent('restricted')).toEqual(everywhere);
    expect((await lift(restriction.id)).statusCode).toBe(409);

    const audit = await auditActions(tenant);
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['restriction.file.authorised', 'restriction.filed', 'restriction.lifted']),
    );
    expect(JSON.stringify(audit)).not.toContain(subjects.restricted);
    expect(audit.find((a) => a.action === 'restriction.filed')?.details).toMatchObject({
      kind: 'restriction',
      subjectHash: restriction.subjectHash,
      purposes: 0,
    });
  });

  it('another API process that holds the set in memory applies a filing and a lift from its next read', async () => {
    const elsewhere = createMongoRestrictionStore(app.runtime.db, app.services.fingerprints);
    const subject = `subj-x-${randomUUID().slice(0, 6)}`;
    expect((await elsewhere.snapshot(tenant)).bars([subject], 'support')).toBe(false);
    const filed = await file({
      selector: { subjectId: subject },
      legalGround: 'art18-1c',
      reason: 'kept for a legal claim',
      requestKey: `rk-${randomUUID()}`,
    });
    expect(filed.statusCode, filed.body).toBe(201);
    expect((await elsewhere.snapshot(tenant)).bars([subject], 'support')).toBe(true);
    expect((await lift(filed.json<{ id: string }>().id)).statusCode).toBe(200);
    expect((await elsewhere.snapshot(tenant)).bars([subject], 'support')).toBe(false);
  });

  it('an objection to a purpose stops service to a token that grants it, whatever purpose it declares, and to no other', async () => {
    const filed = await file({
      selector: { subjectId: subjects.objected },
      legalGround: 'art21-2',
      reason: 'the subject objects to personalised offers',
      purposes: ['personalisation'],
      requestKey: `rk-${randomUUID()}`,
    });
    expect(filed.statusCode, filed.body).toBe(201);
    const objection = filed.json<{ id: string; kind: string; purposes: string[] }>();
    expect(objection).toMatchObject({ kind: 'objection', purposes: ['personalisation'] });

    expect(await servedToAgent('objected', 'personalisation')).toEqual(nowhere);
    // Ann's token may read for personalisation: declaring another purpose does not sidestep the objection.
    expect(await servedToAgent('objected', 'support')).toEqual(nowhere);
    expect(await servedToAgent('objected')).toEqual(nowhere);
    // A token that grants support only is not bound by it.
    expect(await servedToAgent('objected', 'support', ['support'])).toEqual(everywhere);
    expect(await servedToAgent('objected', undefined, ['support'])).toEqual(everywhere);
    expect(await servedToAgent('other', 'personalisation')).toEqual(everywhere);
    const dpoRead = await call('GET', `/memories/${records.objected.memory}`, ['dpo'], 'dora');
    expect(dpoRead.json()).toMatchObject({ restriction: { restricted: false, objectedPurposes: ['personalisation'] } });

    expect((await lift(objection.id)).statusCode).toBe(200);
    expect(await servedToAgent('objected', 'personalisation')).toEqual(everywhere);
    expect(await servedToAgent('objected', 'support')).toEqual(everywhere);
  });

  it('filing again under the same request key returns the same request; another filing under it is refused', async () => {
    const requestKey = `rk-${randomUUID()}`;
    const filing = {
      selector: { subjectId: `subj-i-${randomUUID().slice(0, 6)}` },
      legalGround: 'art18-1d',
      reason: 'objection pending verification',
      requestKey,
    };
    const first = await file(filing);
    const again = await file(filing);
    expect([first.statusCode, again.statusCode]).toEqual([201, 200]);
    expect(again.json<{ id: string }>().id).toBe(first.json<{ id: string }>().id);
    const reused = await file({ ...filing, selector: { subjectId: 'someone-else' } });
    expect(reused.statusCode).toBe(409);
    expect(reused.json<{ error: { field?: string } }>().error.field).toBe('requestKey');
    const id = first.json<{ id: string }>().id;
    const filedEntries = (await auditActions(tenant)).filter(
      (a) => a.action === 'restriction.filed' && a.details?.['legalGround'] === 'art18-1d',
    );
    expect(filedEntries).toHaveLength(1);

    const shown = await call('GET', `/subject-rights/restrictions/${id}`, ['auditor'], 'audrey');
    expect(shown.statusCode, shown.body).toBe(200);
    expect(shown.json()).toMatchObject({ id, kind: 'restriction', legalGround: 'art18-1d' });
    // A keyset list, a page at a time: every request once, most recent first.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call(
        'GET',
        `/subject-rights/restrictions?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        ['legal'],
        'lena',
      );
      expect(page.statusCode, page.body).toBe(200);
      const body = page.json<{ items: { id: string }[]; nextCursor: string | null }>();
      expect(body.items.length).toBeLessThanOrEqual(1);
      seen.push(...body.items.map((i) => i.id));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen[0]).toBe(id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(await storedIn(tenant));
  });

  it('odd bytes in any field of a filing are refused naming the field, and nothing is stored', async () => {
    const quiet = uniqueTenant();
    const valid = {
      selector: { subjectId: 'subject-odd' },
      legalGround: 'art21-1',
      reason: 'objection to profiling',
      purposes: ['personalisation'],
      requestKey: 'rk-odd',
    };
    const odd = ['a\u0000b', 'line\nbreak', '\u001b[31m', 'lone \ud800 surrogate', '\u0085', 'x'.repeat(5000), ''];
    const cases: [string, (v: string) => object][] = [
      ['selector.subjectId', (v) => ({ ...valid, selector: { subjectId: v } })],
      ['legalGround', (v) => ({ ...valid, legalGround: v })],
      ['reason', (v) => ({ ...valid, reason: v })],
      ['purposes.0', (v) => ({ ...valid, purposes: [v] })],
      ['requestKey', (v) => ({ ...valid, requestKey: v })],
    ];
    const token = await app.token(quiet, ['dpo'], 'dora');
    for (const [field, body] of cases)
      for (const value of odd) {
        const response = await app.request({
          method: 'POST',
          url: `/v1/tenants/${quiet}/subject-rights/restrictions`,
          token,
          payload: body(value),
        });
        expect(response.statusCode, `${field} ${JSON.stringify(value).slice(0, 20)}`).toBe(400);
        const error = response.json<{ error: { field?: string; message: string } }>().error;
        expect(error.field, `${field} ${JSON.stringify(value).slice(0, 20)}`).toBe(field);
        expect(error.message).toContain(field);
      }
    const unknownField = await app.request({
      method: 'POST',
      url: `/v1/tenants/${quiet}/subject-rights/restrictions`,
      token,
      payload: { ...valid, note: 'x' },
    });
    expect(unknownField.statusCode).toBe(400);
    // Checks a schema cannot state, named too: a ground of the other kind, a duty purpose, a purpose twice.
    for (const [field, payload] of [
      ['legalGround', { ...valid, legalGround: 'art18-1a' }],
      ['purposes.0', { ...valid, purposes: ['erasure'] }],
      ['purposes.1', { ...valid, purposes: ['marketing', 'marketing'] }],
      ['legalGround', { ...valid, purposes: undefined }],
    ] as const) {
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${quiet}/subject-rights/restrictions`,
        token,
        payload,
      });
      expect(response.statusCode, field).toBe(400);
      expect(response.json<{ error: { field?: string } }>().error.field).toBe(field);
    }
    expect(await storedIn(quiet)).toBe(0);
    expect(await auditActions(quiet)).toEqual([]);
  });

  it('only the DPO of the tenant files or lifts: agents, admins and another tenant are refused', async () => {
    const quiet = uniqueTenant();
    const filing = {
      selector: { subjectId: 'subject-x' },
      legalGround: 'art18-1b',
      reason: 'unlawful processing, the subject asks for restriction instead of erasure',
      requestKey: 'rk-denied',
    };
    const post = async (roles: Role[], tokenTenant: string) =>
      app.request({
        method: 'POST',
        url: `/v1/tenants/${quiet}/subject-rights/restrictions`,
        token: await app.token(tokenTenant, roles, 'someone'),
        payload: filing,
      });
    expect((await post(['agent'], quiet)).statusCode).toBe(403);
    const admin = await post(['admin'], quiet);
    expect(admin.statusCode).toBe(403);
    expect(admin.json<{ error: { message: string } }>().error.message).toContain('subject-restrictions');
    expect((await post(['dpo'], uniqueTenant())).statusCode).toBe(403);
    const agentList = await app.request({
      method: 'GET',
      url: `/v1/tenants/${quiet}/subject-rights/restrictions`,
      token: await app.token(quiet, ['agent'], 'ann'),
    });
    expect(agentList.statusCode).toBe(403);
    expect(await storedIn(quiet)).toBe(0);

    // A lift by an admin, or by another tenant's DPO, leaves the restriction in force.
    const filed = await post(['dpo'], quiet);
    expect(filed.statusCode, filed.body).toBe(201);
    const id = filed.json<{ id: string }>().id;
    for (const [roles, t] of [
      [['admin'], quiet],
      [['dpo'], uniqueTenant()],
    ] as const) {
      const refused = await app.request({
        method: 'POST',
        url: `/v1/tenants/${quiet}/subject-rights/restrictions/${id}/lift`,
        token: await app.token(t, [...roles], 'someone'),
        payload: { reason: 'no' },
      });
      expect(refused.statusCode).toBe(403);
    }
    const still = await app.request({
      method: 'GET',
      url: `/v1/tenants/${quiet}/subject-rights/restrictions/${id}`,
      token: await app.token(quiet, ['dpo'], 'dora'),
    });
    expect(still.json()).toMatchObject({ active: true });
  });
});
