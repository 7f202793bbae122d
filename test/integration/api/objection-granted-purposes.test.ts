/**
 * An objection (Art. 21) binds the processing, not the label one request puts on it: an agent whose token grants
 * the objected purpose is not served the subject's records whatever purpose it declares, and it cannot declare a
 * purpose its token does not grant. An agent not granted the objected purpose still reads them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { subjectNotesBatch, subjectNotesWritten, type SubjectNote } from '../../support/subject-notes.js';

describe('an objection against the purposes a token grants', () => {
  let app: TestApp;
  let tenant: string;
  const term = `voucher${randomUUID().slice(0, 6)}`;
  const subjects = { objected: `subj-o-${randomUUID().slice(0, 6)}`, other: `subj-c-${randomUUID().slice(0, 6)}` };
  const records = {} as Record<keyof typeof subjects, SubjectNote>;
  /** One agent, ann, holding tokens that grant different purposes: her records are in her own scope. */
  const SUPPORT_AND_MARKETING = ['support', 'marketing'];
  const SUPPORT_ONLY = ['support'];

  const call = async (method: 'GET' | 'POST', url: string, purposes: string[] | null, payload?: object) =>
    app.request({
      method,
      url: `/v1/tenants/${tenant}${url}`,
      token: purposes
        ? await app.token(tenant, ['agent'], 'ann', 600, purposes)
        : await app.token(tenant, ['dpo'], 'dora'),
      ...(payload ? { payload } : {}),
    });

  /** What ann, under a token granting `purposes`, is served about `who` through each route, declaring `purpose`. */
  async function served(who: keyof typeof subjects, purposes: string[], purpose?: string) {
    const p = purpose ? { purpose } : {};
    const q = purpose ? `?purpose=${purpose}` : '';
    const search = await call('POST', '/search', purposes, { query: term, k: 50, ...p });
    const retrieve = await call('POST', '/retrieve', purposes, { query: term, k: 50, ...p });
    const memory = await call('GET', `/memories/${records[who].memory}${q}`, purposes);
    const event = await call('GET', `/events/${records[who].event}${q}`, purposes);
    for (const r of [search, retrieve]) expect(r.statusCode, r.body).toBe(200);
    const missing = await call('GET', `/memories/mem_does_not_exist${q}`, purposes);
    return {
      search: search
        .json<{ results: { memory: { id: string } }[] }>()
        .results.some((r) => r.memory.id === records[who].memory),
      retrieve: retrieve.json<{ items: { id: string }[] }>().items.some((i) => i.id === records[who].memory),
      memory: memory.statusCode === 200,
      event: event.statusCode === 200,
      // A refused record answers exactly as a missing one.
      refusedLikeMissing: memory.statusCode === 404 && memory.body === missing.body,
      canarySeen: [search, retrieve, memory, event].some((r) => r.body.includes(records[who].canary)),
    };
  }
  const everywhere = {
    search: true,
    retrieve: true,
    memory: true,
    event: true,
    refusedLikeMissing: false,
    canarySeen: true,
  };
  const nowhere = {
    search: false,
    retrieve: false,
    memory: false,
    event: false,
    refusedLikeMissing: true,
    canarySeen: false,
  };

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    const { payload, canaries } = subjectNotesBatch(term, subjects);
    Object.assign(records, subjectNotesWritten(await call('POST', '/batches', SUPPORT_ONLY, payload), canaries));

    // Before the objection, both tokens are served the subject.
    expect(await served('objected', SUPPORT_AND_MARKETING, 'support')).toEqual(everywhere);
    const filed = await call('POST', '/subject-rights/restrictions', null, {
      selector: { subjectId: subjects.objected },
      legalGround: 'art21-2',
      reason: 'the subject objects to direct marketing',
      purposes: ['marketing'],
      requestKey: `rk-${randomUUID()}`,
    });
    expect(filed.statusCode, filed.body).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });

  it('an agent granted marketing and support is not served the subject by declaring support, on any route', async () => {
    expect(await served('objected', SUPPORT_AND_MARKETING, 'support')).toEqual(nowhere);
    expect(await served('objected', SUPPORT_AND_MARKETING)).toEqual(nowhere);
    // Another subject's records are still served to the same token.
    expect(await served('other', SUPPORT_AND_MARKETING, 'support')).toEqual(everywhere);
  });

  it('declaring a purpose the token does not grant is refused naming purpose, on every route, and audited', async () => {
    const refusals = [
      await call('POST', '/search', SUPPORT_ONLY, { query: term, purpose: 'personalisation' }),
      await call('POST', '/retrieve', SUPPORT_ONLY, { query: term, purpose: 'personalisation' }),
      await call('GET', `/memories/${records.other.memory}?purpose=personalisation`, SUPPORT_ONLY),
      await call('GET', `/events/${records.other.event}?purpose=customer-support`, SUPPORT_AND_MARKETING),
    ];
    for (const refused of refusals) {
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json()).toMatchObject({ error: { code: 'Forbidden', field: 'purpose' } });
      expect(refused.body).not.toContain(records.other.canary);
      expect(refused.body).not.toMatch(/\bat .*\.[jt]s:\d+/);
    }
    const entries = [];
    for await (const e of app.services.audit.entries(tenant)) if (e.action === 'read.refused') entries.push(e);
    expect(entries.at(-1)).toMatchObject({
      actor: 'ann',
      outcome: 'refused',
      details: { purpose: 'customer-support', refusedBy: 'token-purposes' },
    });
  });

  it('an agent granted support only still reads the subject', async () => {
    expect(await served('objected', SUPPORT_ONLY, 'support')).toEqual(everywhere);
    expect(await served('objected', SUPPORT_ONLY)).toEqual(everywhere);
  });

  it('a duty read still sees the subject, marked with the objection', async () => {
    const dpoRead = await call('GET', `/memories/${records.objected.memory}`, null);
    expect(dpoRead.statusCode, dpoRead.body).toBe(200);
    expect(dpoRead.json()).toMatchObject({ restriction: { restricted: false, objectedPurposes: ['marketing'] } });
  });
});
