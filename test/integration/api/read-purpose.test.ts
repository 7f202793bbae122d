import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleMemory, statedBatch } from '../../support/samples.js';

/** The read policy decides who reads what for which purpose, by search and by id; refusals are audited. */
describe('reading for a purpose', () => {
  let app: TestApp;
  let tenant: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    const memories = (['internal', 'confidential', 'special'] as const).map((sensitivity) =>
      sampleMemory({
        kind: 'note',
        attribute: `note-${sensitivity}`,
        sensitivity,
        content: `Loyalty note (${sensitivity}).`,
      }),
    );
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], 'ann'),
      // Each memory cites an event that states it: the derivation audit admits them as written.
      payload: statedBatch(memories),
    });
    expect(written.statusCode, written.body).toBe(201);
    const out = written.json<{ memories: { id: string; status: string }[] }>().memories;
    ['internal', 'confidential', 'special'].forEach((s, i) => (ids[s] = out[i]!.id));
    // Special-category data is high-impact: it is served only once a reviewer signs it off.
    expect(out[2]!.status).toBe('candidate');
    const approved = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/review-queue/${ids.special}/decision`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
      payload: { decision: 'approve', reason: 'stated by the customer' },
    });
    expect(approved.statusCode, approved.body).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
  });

  const search = async (roles: ('agent' | 'reviewer' | 'admin')[], purpose?: string) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token: await app.token(tenant, roles, 'ann'),
      payload: { query: 'loyalty note', ...(purpose ? { purpose } : {}) },
    });
  const found = (response: Awaited<ReturnType<typeof search>>) =>
    response
      .json<{ results: { memory: { id: string } }[] }>()
      .results.map((r) => Object.entries(ids).find(([, id]) => id === r.memory.id)?.[0])
      .sort();

  it('serves each reader only the sensitivities its purpose allows, filtered in the index', async () => {
    expect(found(await search(['agent']))).toEqual(['confidential', 'internal']);
    expect(found(await search(['reviewer'], 'review'))).toEqual(['confidential', 'internal', 'special']);
    expect(found(await search(['admin']))).toEqual(['internal']);
  });

  it('refuses a purpose the policy does not allow, naming the field, and audits the refusal', async () => {
    const refused = await search(['agent'], 'marketing');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: { code: 'PolicyDenied', field: 'purpose' } });
    const entries = [];
    for await (const e of app.services.audit.entries(tenant)) if (e.action === 'read.refused') entries.push(e);
    expect(entries.at(-1)).toMatchObject({
      outcome: 'refused',
      details: { policyId: 'memory-read', purpose: 'marketing' },
    });
  });

  it('refuses to read special-category data by id for an agent, exactly as a missing record, and allows it to a reviewer reviewing', async () => {
    const read = async (id: string) =>
      app.request({
        method: 'GET',
        url: `/v1/tenants/${tenant}/memories/${id}`,
        token: await app.token(tenant, ['agent'], 'ann'),
      });
    const agent = await read(ids.special!);
    const missing = await read('mem_does_not_exist');
    expect(agent.statusCode).toBe(404);
    expect(agent.body).toBe(missing.body);
    expect(agent.body).not.toContain('Loyalty note');
    const own = await read(ids.internal!);
    expect(own.json()).toMatchObject({ id: ids.internal, content: 'Loyalty note (internal).', view: 'content' });
    const reviewer = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/memories/${ids.special}?purpose=review`,
      token: await app.token(tenant, ['reviewer']),
    });
    expect(reviewer.statusCode).toBe(200);
    expect(reviewer.json()).toMatchObject({ id: ids.special, content: 'Loyalty note (special).' });
    const unknownField = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/memories/${ids.internal}?porpose=review`,
      token: await app.token(tenant, ['agent']),
    });
    expect(unknownField.statusCode).toBe(400);
  });
});
