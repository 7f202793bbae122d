import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure } from '../../support/erasure-fixture.js';
import { disputeAbout, writeCandidate } from '../../support/side-records-fixture.js';

interface ListPage {
  items: { id: string; type?: string }[];
  nextCursor: string | null;
}

/** Every item of a list, page by page (`limit` a page), and the size of each page. */
async function walk(app: TestApp, url: string, token: string, limit: number) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const query: Record<string, string> = { limit: String(limit), ...(cursor ? { cursor } : {}) };
    const page = await app.request({ method: 'GET', url, query, token });
    expect(page.statusCode, page.body).toBe(200);
    const body = page.json<ListPage>();
    ids.push(...body.items.map((i) => i.id));
    sizes.push(body.items.length);
    cursor = body.nextCursor;
  } while (cursor && sizes.length < 10);
  return { ids, sizes };
}

/** The lists a tenant grows without bound come a page at a time: `limit`, and `nextCursor` until it is null. */
describe('every list route pages with limit and an opaque cursor', () => {
  let app: TestApp;
  const tenant = uniqueTenant();
  let legal: string;
  let dpo: string;
  let reviewer: string;
  beforeAll(async () => {
    app = await startTestApp();
    [legal, dpo, reviewer] = await Promise.all([
      app.token(tenant, ['legal']),
      app.token(tenant, ['dpo'], 'dpo-1'),
      app.token(tenant, ['reviewer']),
    ]);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lists legal holds oldest first, two at a time, each once', async () => {
    const placed: string[] = [];
    for (const n of [1, 2, 3]) {
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/legal-holds`,
        token: legal,
        payload: { scope: { recordIds: [`mem_paged-${n}`] }, caseRef: `case-${n}` },
      });
      expect(response.statusCode, response.body).toBe(201);
      placed.push(response.json<{ id: string }>().id);
    }
    const { ids, sizes } = await walk(app, `/v1/tenants/${tenant}/legal-holds`, legal, 2);
    expect(ids).toEqual(placed);
    expect(sizes).toEqual([2, 1]);
  });

  it('lists erasure requests newest first, two at a time, each once', async () => {
    const filed: string[] = [];
    for (const n of [1, 2, 3]) filed.push(await fileErasure(app, tenant, { memoryIds: [`mem_gone-${n}`] }, 'art17-1a'));
    const { ids, sizes } = await walk(app, `/v1/tenants/${tenant}/erasure-requests`, dpo, 2);
    expect(ids).toEqual([...filed].reverse());
    expect(sizes).toEqual([2, 1]);
  });

  it('lists the review queue as sign-offs then disputes, a page filled across the two', async () => {
    const candidates: string[] = [];
    for (const about of ['paged-a', 'paged-b', 'paged-c']) candidates.push(await writeCandidate(app, tenant, about));
    const { disputeId } = await disputeAbout(app, tenant, 'paged-d');
    const { ids, sizes } = await walk(app, `/v1/tenants/${tenant}/review-queue`, reviewer, 2);
    expect(ids).toEqual([...candidates, disputeId]);
    expect(sizes).toEqual([2, 2]);
  });

  it('refuses a cursor it did not issue with 400 naming cursor, on every list route', async () => {
    const forged = Buffer.from('{"a":"not a date","i":1}').toString('base64url');
    const lists = [
      [`/v1/tenants/${tenant}/legal-holds`, legal],
      [`/v1/tenants/${tenant}/erasure-requests`, dpo],
      [`/v1/tenants/${tenant}/review-queue`, reviewer],
      [`/v1/tenants/${tenant}/memories/mem_x/exposures`, dpo],
    ] as const;
    for (const [url, token] of lists) {
      for (const cursor of [forged, 'bm90LWpzb24']) {
        const response = await app.request({ method: 'GET', url, query: { cursor }, token });
        expect(response.statusCode, `${url}: ${response.body}`).toBe(400);
        expect(response.json<{ error: { field: string } }>().error.field).toBe('cursor');
      }
    }
  });
});
