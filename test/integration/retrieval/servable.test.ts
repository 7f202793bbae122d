/**
 * What the governed search could serve, listed rather than searched: an erasure's verification checks every erased
 * sentence against it, so a copy ranked below any k is still found. It holds every result any search gives the same
 * reader, the records a dispute discloses even when the index no longer holds them, and nothing the reader may not
 * see (held, deleted and candidate records).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { ordinalWord, sampleEvent, sampleMemory, statedBatch } from '../../support/samples.js';
import { probeReader } from '../../../src/governance/read/reader.js';

describe('everything the governed search could serve', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('holds every search result at any k, a disputed record and its unindexed counterpart, and no held, deleted or candidate record', async () => {
    const tenant = uniqueTenant();
    const term = `srv${randomUUID().slice(0, 6)}`;
    const write = async (
      principal: string,
      memories: Record<string, unknown>[],
      events?: Record<string, unknown>[],
    ) => {
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: await app.token(tenant, ['agent'], principal),
        payload: statedBatch(memories, events),
      });
      expect(response.statusCode, response.body).toBe(201);
      const written = response.json<{ memories: { id: string; status: string }[] }>().memories;
      return written.map((m) => m.id);
    };
    // 40 notes that all match the same words: a search at k = 5 serves a few; the listing holds all of them.
    const notes = await write(
      'ana',
      Array.from({ length: 40 }, (_, i) =>
        sampleMemory({
          subjects: [`customer-${i % 4}`],
          kind: 'note',
          attribute: `note-${i}`,
          content: `${term} shipment ${ordinalWord(i)} left the depot with its invoice`,
          ...(i % 3 === 0 ? { scope: 'tenant' } : {}),
          ...(i % 5 === 0 ? { sensitivity: 'confidential' } : {}),
        }),
      ),
    );
    // A special-category note waits for sign-off: a candidate, served to no one.
    const [pending] = await write('ana', [
      sampleMemory({
        subjects: ['customer-0'],
        kind: 'note',
        attribute: 'pending',
        content: `${term} special note`,
        sensitivity: 'special',
      }),
    ]);
    expect((await app.services.memories.get(tenant, pending!))?.status).toBe('candidate');
    const [held, deleted, superseded] = notes;
    await app.services.memories.restrict(tenant, [held!], `hold_${randomUUID()}`);
    await app.services.memories.transition(tenant, deleted!, 'active', 'deleted', 'test:servable');
    await app.services.memories.transition(tenant, superseded!, 'active', 'superseded', 'test:servable');
    // Two employers of one subject: the second is disputed against the first.
    const subject = `subject-${randomUUID().slice(0, 6)}`;
    const employer = (content: string, validFrom: string) =>
      sampleMemory({ subjects: [subject], kind: 'fact', attribute: 'employer', content, validFrom, scope: 'tenant' });
    const [first] = await write(
      'ben',
      [employer(`Works at Acme Corp ${term}.`, '2024-01-01T00:00:00Z')],
      [sampleEvent({ subjects: [subject], content: 'Works at Acme Corp.' })],
    );
    const [second] = await write(
      'ben',
      [employer(`Works at Globex Ltd ${term}.`, '2025-06-01T00:00:00Z')],
      [sampleEvent({ subjects: [subject], content: 'Works at Globex Ltd.' })],
    );
    expect((await app.services.memories.get(tenant, second!))?.status).toBe('disputed');
    // The first side leaves the index (a lost write, a purge in flight): the dispute still discloses it.
    await app.services.index.purge(tenant, [first!]);

    const reader = probeReader(tenant, new Date());
    const listed = new Map<string, string>();
    for await (const page of app.services.search.servable(tenant, reader))
      for (const result of page) listed.set(result.memory.record._id, result.memory.record.content);
    const expected = [...notes.filter((id) => id !== held && id !== deleted), first!, second!];
    expect([...listed.keys()].sort()).toEqual(expected.sort());
    expect(listed.has(pending!)).toBe(false);
    // Served content is the record's own (opened), as a search serves it.
    expect(listed.get(second!)).toContain('Globex');

    // Whatever the query and k, every result a search gives the same reader is listed.
    const queries = [
      ...[0, 7, 19, 33].map((i) => `${term} shipment ${ordinalWord(i)} left the depot with its invoice`),
      `Works at Acme Corp ${term}`,
      'Globex',
      'invoice depot',
      'nothing in common here',
    ];
    for (const k of [1, 5, 50]) {
      const answers = await app.services.search.searchMany(
        tenant,
        queries.map((query) => ({ query, k, intent: 'history' as const })),
        reader,
        { traced: false },
      );
      const served = answers.flat().map((r) => r.memory.record._id);
      expect(served.length).toBeGreaterThan(0);
      for (const id of served) expect(listed.has(id), `${id} served at k = ${k} but not listed`).toBe(true);
      if (k === 50) expect(served).toContain(first!);
    }
  });
});
