import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

describe('human sign-off for high-impact writes', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  async function writeHighImpact(tenant: string, writer: string) {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], writer),
      payload: {
        events: [sampleEvent({ namespace: 'hr' })],
        memories: [sampleMemory({ namespace: 'hr', kind: 'fact', attribute: 'salary', content: 'Salary is 52k.' })],
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    const memory = response.json<{ memories: { id: string; status: string }[] }>().memories[0]!;
    expect(memory.status).toBe('candidate');
    return memory.id;
  }

  it('waits in the queue; a reviewer approves through the API and gets the answer; it becomes searchable', async () => {
    const tenant = uniqueTenant();
    const id = await writeHighImpact(tenant, 'agent-1');
    const reviewer = await app.token(tenant, ['reviewer'], 'rita');
    const queue = await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/review-queue`, token: reviewer });
    expect(queue.json<{ items: { id: string }[] }>().items.map((i) => i.id)).toEqual([id]);
    const item = await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/review-queue/${id}`, token: reviewer });
    expect(item.json<{ content: string; evidence: { eventIds: string[] } }>()).toMatchObject({
      content: 'Salary is 52k.',
    });
    const decided = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/review-queue/${id}/decision`,
      token: reviewer,
      payload: { decision: 'approve', reason: 'matches the signed contract' },
    });
    expect(decided.statusCode, decided.body).toBe(200);
    expect(decided.json()).toMatchObject({ id, status: 'active', decidedBy: 'rita' });
    const search = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
      payload: { query: 'salary' },
    });
    expect(search.json<{ results: { memory: { id: string } }[] }>().results.map((r) => r.memory.id)).toEqual([id]);
    let decisions = 0;
    for await (const entry of app.services.audit.entries(tenant))
      if (entry.target === id && entry.action === 'memory.approved') decisions++;
    expect(decisions).toBe(1);
  });

  it('keeps a rejected write as rejected, never served', async () => {
    const tenant = uniqueTenant();
    const id = await writeHighImpact(tenant, 'agent-1');
    const decided = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/review-queue/${id}/decision`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
      payload: { decision: 'reject', reason: 'no source for this figure' },
    });
    expect(decided.json()).toMatchObject({ status: 'rejected' });
    expect((await app.services.memories.get(tenant, id))?.status).toBe('rejected');
    // Agents never get it, not even its writer by id; a reviewer sees it, with its status.
    const agentRead = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/memories/${id}?intent=history`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
    });
    expect(agentRead.statusCode).toBe(404);
    const read = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/memories/${id}?purpose=review`,
      token: await app.token(tenant, ['reviewer']),
    });
    const search = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
      payload: { query: 'salary', intent: 'history' },
    });
    expect(search.json<{ results: unknown[] }>().results).toEqual([]);
    expect(read.statusCode).toBe(200);
    expect(read.json<{ status: string }>().status).toBe('rejected');
  });

  it('refuses a self-approval, and a second decision', async () => {
    const tenant = uniqueTenant();
    const id = await writeHighImpact(tenant, 'sam');
    const self = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/review-queue/${id}/decision`,
      token: await app.token(tenant, ['reviewer', 'agent'], 'sam'),
      payload: { decision: 'approve', reason: 'looks right to me' },
    });
    expect(self.statusCode).toBe(403);
    expect((await app.services.memories.get(tenant, id))?.status).toBe('candidate');
    const reviewer = await app.token(tenant, ['reviewer'], 'rita');
    const first = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/review-queue/${id}/decision`,
      token: reviewer,
      payload: { decision: 'approve', reason: 'ok' },
    });
    expect(first.statusCode).toBe(200);
    const second = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/review-queue/${id}/decision`,
      token: reviewer,
      payload: { decision: 'reject', reason: 'changed my mind' },
    });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({
      error: { code: 'Conflict', message: 'review: already decided by another reviewer' },
    });
  });
});
