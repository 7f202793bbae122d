/**
 * Records an erasure finds outside the memories, events and lineage, written the way they arise: a reviewer's
 * sign-off reason, two writes that disagree (a dispute), and a stage an ingest left behind.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { sampleEvent, sampleMemory } from './samples.js';

/** `POST …/batches` as `writer`, which must be admitted (201). */
export async function writeBatch(app: TestApp, tenant: string, writer: string, payload: object) {
  const response = await app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/batches`,
    token: await app.token(tenant, ['agent'], writer),
    payload,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
}

/** A high-impact write about `about` (a salary), which waits in the review queue; returns its id. */
export async function writeCandidate(app: TestApp, tenant: string, about: string): Promise<string> {
  const { memories } = await writeBatch(app, tenant, 'agent-1', {
    events: [sampleEvent({ namespace: 'hr', subjects: [about] })],
    memories: [
      sampleMemory({
        namespace: 'hr',
        subjects: [about],
        kind: 'fact',
        attribute: 'salary',
        content: 'Salary is 52k.',
      }),
    ],
  });
  expect(memories[0]!.status).toBe('candidate');
  return memories[0]!.id;
}

/** A high-impact write about `about` signed off through the API, with a reason in words; returns its id. */
export async function signOff(app: TestApp, tenant: string, about: string, reason: string): Promise<string> {
  const id = await writeCandidate(app, tenant, about);
  const decided = await app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/review-queue/${id}/decision`,
    token: await app.token(tenant, ['reviewer'], 'rita'),
    payload: { decision: 'approve', reason },
  });
  expect(decided.statusCode, decided.body).toBe(200);
  return id;
}

/** Two writes about one subject's employer that disagree: a dispute. */
export async function disputeAbout(app: TestApp, tenant: string, about: string) {
  const a = await writeBatch(app, tenant, 'agent-1', {
    events: [sampleEvent({ subjects: [about], content: 'Call note: works at Acme.' })],
    memories: [sampleMemory({ subjects: [about], kind: 'fact', attribute: 'employer', content: 'Works at Acme.' })],
  });
  const b = await writeBatch(app, tenant, 'agent-2', {
    events: [sampleEvent({ subjects: [about], content: 'Call note: works at Globex.' })],
    memories: [sampleMemory({ subjects: [about], kind: 'fact', attribute: 'employer', content: 'Works at Globex.' })],
  });
  const ids = [a.memories[0]!.id, b.memories[0]!.id];
  const [open] = await app.services.disputes.openFor(tenant, ids[0]!);
  expect(open?.memoryIds).toEqual([...ids].sort());
  return { ids, disputeId: open!._id };
}

/** A stage an ingest left behind (the API stopped between staging and starting the write); returns its id. */
export async function leaveStage(
  app: TestApp,
  tenant: string,
  body: { events?: object[]; memories?: object[] },
  id = `stg_${randomUUID()}`,
): Promise<string> {
  await app.services.staging.put({
    _id: id,
    tenant,
    principal: 'agent-1',
    body: { roles: ['agent'], events: [], memories: [], ...body },
    createdAt: new Date(),
  });
  return id;
}
