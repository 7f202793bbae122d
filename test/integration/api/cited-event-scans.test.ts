/**
 * One write cannot pin the worker: a memory that cites one stored 32 KB event 256 times is refused before anything
 * reads the event, and a memory citing 32 KB of text shaped to make the instruction scan backtrack is judged while an
 * erasure filed meanwhile runs to completion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

const KB32 = 32 * 1024;
const padded = (head: string, tail = '') => `${head}${' '.repeat(KB32 - head.length - tail.length)}${tail}`;

describe('writes that cite large events', () => {
  let app: TestApp;
  let tenant: string;
  const write = async (payload: object) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
      payload,
    });
  const storedEvent = async (content: string, subject: string) => {
    const response = await write({ events: [sampleEvent({ content, subjects: [subject] })] });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ events: { id: string }[] }>().events[0]!.id;
  };

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  it('refuses a memory citing one stored 32 KB event 256 times, naming the field', async () => {
    const eventId = await storedEvent(padded('Customer note.'), 'subject-repeat');
    const response = await write({
      memories: [
        sampleMemory({
          subjects: ['subject-repeat'],
          provenance: { eventIds: Array.from({ length: 256 }, () => eventId), derivationRule: 'extract-preference' },
        }),
      ],
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<{ error: { field: string } }>().error.field).toBe('memories.0.provenance.eventIds.1');
  });

  it('judges a memory citing 32 KB of backtracking bait while an erasure filed meanwhile completes', async () => {
    await storedEvent('Customer said they prefer phone calls.', 'subject-erased');
    const baits = [
      await storedEvent(padded('ignore', 'x'), 'subject-bait'),
      await storedEvent(padded('<', 'x'), 'subject-bait'),
    ];
    const written = write({
      memories: baits.map((eventId, i) =>
        sampleMemory({
          subjects: ['subject-bait'],
          attribute: `bait-${i}`,
          provenance: { eventIds: [eventId], derivationRule: 'extract-preference' },
        }),
      ),
    });
    const requestId = await fileErasure(app, tenant, { subjectId: 'subject-erased' }, 'art17-1a');
    const response = await written;
    expect(response.statusCode, response.body).toBe(201);
    // Admitted, as the impact policy says (active, or a candidate for a reviewer): the scan answered.
    for (const m of response.json<{ memories: { status: string }[] }>().memories)
      expect(['active', 'candidate']).toContain(m.status);
    expect((await waitForState(app, tenant, requestId, ['completed', 'needs-operator', 'rejected'])).state).toBe(
      'completed',
    );
  }, 180_000);
});
