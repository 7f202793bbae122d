/**
 * A dispute's resolution is an event that carries the reviewer's reason and both sides' subjects. It is derived
 * from the two disputed records, so an erasure of either one reaches it through lineage.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

describe('a dispute resolution under erasure', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  async function writeEmployer(tenant: string, writer: string, content: string) {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], writer),
      payload: {
        events: [sampleEvent({ content: `Call note: ${content}` })],
        memories: [sampleMemory({ kind: 'fact', attribute: 'employer', content })],
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ memories: { id: string }[] }>().memories[0]!.id;
  }

  it('a resolution event is derived from the disputed records, and erasing one of them erases it', async () => {
    const tenant = uniqueTenant();
    const reason = `HR confirmed the move, ticket ${randomUUID()}`;
    const first = await writeEmployer(tenant, 'agent-1', 'Works at Acme Corp.');
    const second = await writeEmployer(tenant, 'agent-2', 'Works at Globex Ltd.');
    const [dispute] = await app.services.disputes.openFor(tenant, first);
    const resolved = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${dispute!._id}/resolution`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
      payload: { outcome: 'keep-one', memoryId: second, reason },
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
    const eventId = (await app.services.disputes.get(tenant, dispute!._id))!.resolution!.eventId;
    expect((await app.services.events.get(tenant, eventId))?.content).toBe(reason);

    // Both disputed records name the resolution among what was derived from them.
    expect(await app.services.lineage.childrenOf(tenant, first)).toContain(eventId);
    expect(await app.services.lineage.childrenOf(tenant, second)).toContain(eventId);

    // Erasing the losing side alone, by id, reaches the resolution and the reason in it.
    const requestId = await fileErasure(app, tenant, { memoryIds: [first] });
    // The event the losing memory was extracted from repeats it: the DPO erases it too.
    const done = await completeErasure(app, tenant, requestId, 'extend');
    expect(done.state).toBe('completed');
    expect(await app.services.events.get(tenant, eventId)).toBeNull();
    const events = await app.runtime.db.collection(Collections.events).find({ tenant }).toArray();
    expect(JSON.stringify(events)).not.toContain(reason);
  }, 180_000);
});
