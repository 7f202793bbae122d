/**
 * What a tenant leaves at rest, read raw: every document of the tenant in every MongoDB collection and every
 * document of its index, as text, for tests that look for what no store may keep. And a fact written as an agent
 * would: events and one memory extracted from the first.
 */
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { sampleMemory, type sampleEvent } from './samples.js';

export async function tenantAtRest(app: TestApp, tenant: string): Promise<{ where: string; text: string }[]> {
  const found: { where: string; text: string }[] = [];
  for (const { name } of await app.runtime.db.listCollections().toArray()) {
    for (const doc of await app.runtime.db.collection(name).find({ tenant }).toArray())
      found.push({ where: `${name}/${String(doc._id)}`, text: JSON.stringify(doc) });
  }
  const index = await app.services.index.indexOf(tenant);
  if (index) {
    const hits = await app.runtime.es.search({ index, size: 1000, query: { match_all: {} } });
    for (const h of hits.hits.hits) found.push({ where: `es/${h._id}`, text: JSON.stringify(h._source) });
  }
  return found;
}

/** Writes the events and a memory (`health`) extracted from the first, as an agent; returns their ids. */
export async function writeFact(
  app: TestApp,
  tenant: string,
  events: ReturnType<typeof sampleEvent>[],
  memory: { subject: string; content: string },
): Promise<{ eventIds: string[]; memoryId: string }> {
  const written = await app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/batches`,
    token: await app.token(tenant, ['agent']),
    payload: {
      events,
      memories: [
        sampleMemory({
          subjects: [memory.subject],
          attribute: 'health',
          content: memory.content,
          provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-fact' },
        }),
      ],
    },
  });
  expect(written.statusCode, written.body).toBe(201);
  const body = written.json<{ events: { id: string }[]; memories: { id: string }[] }>();
  return { eventIds: body.events.map((e) => e.id), memoryId: body.memories[0]!.id };
}
