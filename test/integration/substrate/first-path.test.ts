import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

describe('the first governed path: ingest → derive → index → search', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const countFor = (collection: string, tenant: string) =>
    app.runtime.db.collection(collection).countDocuments({ tenant });

  it('derives a low-impact memory as active and finds it with the hybrid query', async () => {
    const tenant = uniqueTenant();
    const token = await app.token(tenant, ['agent']);
    const write = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token,
      payload: { events: [sampleEvent()], memories: [sampleMemory()] },
    });
    expect(write.statusCode).toBe(201);
    const body = write.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
    expect(body.memories[0]?.status).toBe('active');

    const search = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token,
      payload: { query: 'email contact preference' },
    });
    expect(search.statusCode).toBe(200);
    const results = search.json<{ results: { memory: { id: string; provenance: { eventIds: string[] } } }[] }>()
      .results;
    expect(results.map((r) => r.memory.id)).toEqual([body.memories[0]!.id]);
    expect(results[0]!.memory.provenance.eventIds).toEqual([body.events[0]!.id]);
  });

  it('keeps a high-impact memory in candidate, out of search, for a reviewer', async () => {
    const tenant = uniqueTenant();
    const token = await app.token(tenant, ['agent']);
    const write = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token,
      payload: {
        events: [sampleEvent()],
        memories: [sampleMemory({ namespace: 'hr', kind: 'fact', attribute: 'salary', content: 'Salary is 50k.' })],
      },
    });
    expect(write.statusCode).toBe(201);
    expect(write.json<{ memories: { status: string }[] }>().memories[0]?.status).toBe('candidate');
    const search = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token,
      payload: { query: 'salary' },
    });
    expect(search.json<{ results: unknown[] }>().results).toEqual([]);
  });

  it('returns the existing event on re-delivery, and stores new content for a known id as a correction', async () => {
    const tenant = uniqueTenant();
    const token = await app.token(tenant, ['agent']);
    const event = sampleEvent();
    const first = await app.request({ method: 'POST', url: `/v1/tenants/${tenant}/events`, token, payload: event });
    const again = await app.request({ method: 'POST', url: `/v1/tenants/${tenant}/events`, token, payload: event });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ id: first.json<{ id: string }>().id, outcome: 'duplicate' });

    const corrected = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/events`,
      token,
      payload: { ...event, content: 'Customer said they moved to Porto.' },
    });
    expect(corrected.json<{ outcome: string }>().outcome).toBe('correction');
    const read = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/events/${corrected.json<{ id: string }>().id}`,
      token: await app.token(tenant, ['auditor']),
    });
    expect(read.json<{ correctionOf: string }>().correctionOf).toBe(first.json<{ id: string }>().id);
    expect(await countFor(Collections.events, tenant)).toBe(2);
  });

  it.each([
    ['an unknown field', { ...sampleEvent(), colour: 'red' }, 'colour'],
    ['oversize content', sampleEvent({ content: 'x'.repeat(40_000) }), 'content'],
    ['an invalid date', sampleEvent({ occurredAt: 'yesterday' }), 'occurredAt'],
    ['no subjects', sampleEvent({ subjects: [] }), 'subjects'],
  ])('refuses an event with %s, naming the field, and stores nothing', async (_name, payload, field) => {
    const tenant = uniqueTenant();
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/events`,
      token: await app.token(tenant, ['agent']),
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ error: { field: string; message: string } }>().error.field).toBe(field);
    expect(await countFor(Collections.events, tenant)).toBe(0);
    expect(await countFor(Collections.staging, tenant)).toBe(0);
  });

  it('refuses an invalid tenant in the path', async () => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/NOT_A_TENANT/events`,
      token: await app.token('t-x', ['agent']),
      payload: sampleEvent(),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ error: { field: string } }>().error.field).toBe('tenant');
  });

  it('refuses a whole batch when one memory cites a missing parent, and stores none of it', async () => {
    const tenant = uniqueTenant();
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent']),
      payload: {
        events: [sampleEvent()],
        memories: [
          sampleMemory(),
          sampleMemory({ provenance: { eventIds: [], parentIds: ['mem_missing'], derivationRule: 'summarise' } }),
        ],
      },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json<{ error: { field: string } }>().error.field).toBe('memories.1.provenance.parentIds.0');
    expect(await countFor(Collections.events, tenant)).toBe(0);
    expect(await countFor(Collections.memories, tenant)).toBe(0);
  });

  it('answers a parent of another tenant exactly as a missing one', async () => {
    const owner = uniqueTenant();
    const other = uniqueTenant();
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${owner}/batches`,
      token: await app.token(owner, ['agent']),
      payload: { events: [sampleEvent()], memories: [sampleMemory()] },
    });
    const foreignId = written.json<{ memories: { id: string }[] }>().memories[0]!.id;
    const otherToken = await app.token(other, ['agent']);
    const foreign = await app.request({
      method: 'POST',
      url: `/v1/tenants/${other}/memories`,
      token: otherToken,
      payload: sampleMemory({ provenance: { eventIds: [], parentIds: [foreignId], derivationRule: 'summarise' } }),
    });
    const missing = await app.request({
      method: 'POST',
      url: `/v1/tenants/${other}/memories`,
      token: otherToken,
      payload: sampleMemory({
        provenance: {
          eventIds: [],
          parentIds: ['mem_00000000-0000-0000-0000-000000000000'],
          derivationRule: 'summarise',
        },
      }),
    });
    expect(foreign.statusCode).toBe(422);
    expect(foreign.statusCode).toBe(missing.statusCode);
    expect(foreign.json()).toEqual(missing.json());
    const read = await app.request({
      method: 'GET',
      url: `/v1/tenants/${other}/memories/${foreignId}`,
      token: otherToken,
    });
    expect(read.statusCode).toBe(404);
  });

  it('refuses to ingest a tombstoned event or to derive from a tombstoned parent', async () => {
    const tenant = uniqueTenant();
    // A caller with erasure rights sees the refusal as it is (an agent's is masked: erasure.test.ts).
    const token = await app.token(tenant, ['admin']);
    const event = sampleEvent();
    await app.services.tombstones.write(tenant, 'req-test', [
      {
        kind: 'subject-content',
        parts: ['subject-1', (await import('../../../src/shared/sha256.js')).sha256Hex(event.content)],
      },
      { kind: 'record', parts: ['mem_erased'] },
    ]);
    const refused = await app.request({ method: 'POST', url: `/v1/tenants/${tenant}/events`, token, payload: event });
    expect(refused.statusCode).toBe(409);
    expect(refused.json<{ error: { code: string } }>().error.code).toBe('Tombstoned');
    const derived = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/memories`,
      token,
      payload: sampleMemory({ provenance: { eventIds: [], parentIds: ['mem_erased'], derivationRule: 'summarise' } }),
    });
    expect(derived.statusCode).toBe(409);
    expect(derived.json<{ error: { field: string } }>().error.field).toBe('memories.0.provenance.parentIds.0');
    expect(await countFor(Collections.events, tenant)).toBe(0);
  });

  it('returns only the asking tenant’s documents from hybrid search', async () => {
    const a = uniqueTenant();
    const b = uniqueTenant();
    // The same principal id writes in both tenants: only the tenant keeps its records apart.
    for (const tenant of [a, b]) {
      await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: await app.token(tenant, ['agent'], 'agent-same'),
        payload: { events: [sampleEvent()], memories: [sampleMemory()] },
      });
    }
    const search = await app.request({
      method: 'POST',
      url: `/v1/tenants/${a}/search`,
      token: await app.token(a, ['agent'], 'agent-same'),
      payload: { query: 'email contact', k: 50 },
    });
    const ids = search.json<{ results: { memory: { id: string } }[] }>().results.map((r) => r.memory.id);
    expect(ids).toHaveLength(1);
    const own = await app.services.memories.getMany(a, ids);
    expect(own).toHaveLength(1);
  });
});
