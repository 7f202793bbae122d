/**
 * Every request about one data subject, for the DPO's subject page: the subject's erasure, access and restriction
 * requests are answered and another subject's are not, the rights the caller may act on follow its role and the
 * policies, and a role that may not file for a subject is refused (403) before anything is read. Each kind is
 * found by its own keyed lookup, so a subject's old request is not lost behind a busy tenant's newer ones.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import type { Role } from '../../../src/governance/auth/principal.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

interface SubjectRequests {
  erasure: { id: string }[] | null;
  access: { id: string }[] | null;
  rectification: { id: string }[] | null;
  restrictions: { id: string; kind: string }[] | null;
  may: Record<'erasure' | 'access' | 'rectification' | 'restriction' | 'objection' | 'lift', boolean>;
}

describe('requests about one subject', () => {
  let app: TestApp;
  const tenant = uniqueTenant();
  const subject = `subj-page-${randomUUID().slice(0, 8)}`;
  const other = `subj-other-${randomUUID().slice(0, 8)}`;
  const post = async (url: string, payload: object, roles: Role[] = ['dpo']) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}${url}`,
      token: await app.token(tenant, roles, roles.includes('dpo') ? 'dora' : 'someone'),
      payload,
    });
  const about = (who: string, roles: Role[] = ['dpo']) =>
    post('/subject-rights/subject-requests', { selector: { subjectId: who } }, roles);
  const restrict = (who: string) =>
    post('/subject-rights/restrictions', {
      selector: { subjectId: who },
      legalGround: 'art18-1a',
      reason: 'the subject contests the accuracy',
      requestKey: randomUUID(),
    });

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("answers the subject's requests of every kind, and none of another subject's", async () => {
    const mine = await restrict(subject);
    const theirs = await restrict(other);
    expect(mine.statusCode, mine.body).toBe(201);
    expect(theirs.statusCode, theirs.body).toBe(201);
    const erasure = await post('/erasure-requests', { selector: { subjectId: subject }, legalGround: 'art17-1a' });
    expect(erasure.statusCode, erasure.body).toBe(202);
    const access = await post('/subject-rights/access', { selector: { subjectId: subject }, requestKey: randomUUID() });
    expect(access.statusCode, access.body).toBe(202);
    await post('/subject-rights/access', { selector: { subjectId: other }, requestKey: randomUUID() });

    const answer = await about(subject);
    expect(answer.statusCode, answer.body).toBe(200);
    const found = answer.json<SubjectRequests>();
    expect(found.restrictions?.map((r) => r.id)).toEqual([mine.json<{ id: string }>().id]);
    expect(found.erasure?.map((r) => r.id)).toEqual([erasure.json<{ id: string }>().id]);
    expect(found.access?.map((r) => r.id)).toEqual([access.json<{ id: string }>().id]);
    expect(found.rectification).toEqual([]);
    expect(found.may).toEqual({
      erasure: true,
      access: true,
      rectification: true,
      restriction: true,
      objection: true,
      lift: true,
    });
    // The subject never comes back: requests keep it as keyed hashes only.
    expect(answer.body).not.toContain(subject);

    const nobody = (await about(`subj-none-${randomUUID().slice(0, 8)}`)).json<SubjectRequests>();
    expect([nobody.erasure, nobody.access, nobody.rectification, nobody.restrictions]).toEqual([[], [], [], []]);
  });

  it("finds the subject's requests behind a thousand newer ones about other people", async () => {
    const before = (await about(subject)).json<SubjectRequests>();
    expect(before.access).toHaveLength(1);
    expect(before.restrictions).toHaveLength(1);
    // A busy tenant: a thousand and one requests of each kind filed after the subject's, about others.
    const later = new Date(Date.now() + 86_400_000);
    const others = (field: string, at: string) =>
      Array.from({ length: 1001 }, (_, i) => ({
        _id: `other-${field}-${i}-${randomUUID().slice(0, 8)}`,
        tenant,
        [field]: `someone-else-${i}`,
        [at]: later,
      }));
    await app.runtime.db
      .collection(Collections.accessRequests)
      .insertMany(others('selectorHash', 'receivedAt') as never);
    await app.runtime.db.collection(Collections.restrictions).insertMany(others('subjectHash', 'filedAt') as never);

    const after = (await about(subject)).json<SubjectRequests>();
    expect(after.access?.map((r) => r.id)).toEqual(before.access?.map((r) => r.id));
    expect(after.restrictions?.map((r) => r.id)).toEqual(before.restrictions?.map((r) => r.id));
  });

  it('offers an admin only the rights an admin may use: erasure, not access, correction or restriction', async () => {
    const answer = await about(subject, ['admin']);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json<SubjectRequests>().may).toEqual({
      erasure: true,
      access: false,
      rectification: false,
      restriction: false,
      objection: false,
      lift: false,
    });
  });

  it.each([['reviewer'], ['auditor'], ['agent'], ['legal']] as [Role][])(
    'refuses a %s with 403 naming the missing right',
    async (role) => {
      const answer = await about(subject, [role]);
      expect(answer.statusCode).toBe(403);
      expect(answer.json<{ error: { message: string } }>().error.message).toContain('erasure.request');
    },
  );

  it('names the field of a missing subject', async () => {
    const answer = await post('/subject-rights/subject-requests', { selector: {} });
    expect(answer.statusCode).toBe(400);
    expect(answer.body).toContain('selector');
  });
});
