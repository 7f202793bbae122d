import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { uniqueId } from '../../support/harness.js';
import { startChatCompletionsStub, type ChatCompletionsStub } from '../../support/chat-completions-stub.js';

const MEMORY = 'The user moved to Berlin because of the new job at Siemens.';

interface WrittenMemory {
  id: string;
  status: string;
  derivation?: string;
}

async function write(app: TestApp, tenant: string, payload: Record<string, unknown>) {
  return app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/batches`,
    token: await app.token(tenant, ['agent'], 'agent-1'),
    payload,
  });
}

/** Events of one subject, each at its own day of November 2026; returns their ids in order. */
async function history(app: TestApp, tenant: string, subject: string, texts: [string, number][]): Promise<string[]> {
  const response = await write(app, tenant, {
    events: texts.map(([content, day]) =>
      sampleEvent({ subjects: [subject], content, occurredAt: `2026-11-${String(day).padStart(2, '0')}T10:00:00Z` }),
    ),
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ events: { id: string }[] }>().events.map((e) => e.id);
}

function memoryAbout(subject: string, overrides: Record<string, unknown> = {}) {
  return sampleMemory({ subjects: [subject], kind: 'relation', attribute: 'residence', content: MEMORY, ...overrides });
}

describe('write-time derivation audit (enforced, deterministic verifier)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { LETHE_DERIVATION_AUDIT: 'enforce' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('admits a provenance-repaired memory and records the repairing events as its provenance and lineage', async () => {
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const [job, link] = await history(app, tenant, subject, [
      ['I started a new job at Siemens.', 1],
      ['The Siemens job is why I moved.', 2],
      ['My cat likes tuna.', 3],
    ]);
    const response = await write(app, tenant, {
      events: [sampleEvent({ subjects: [subject], content: 'I moved to Berlin.', occurredAt: '2026-11-04T10:00:00Z' })],
      memories: [memoryAbout(subject)],
    });
    expect(response.statusCode, response.body).toBe(201);
    const memory = response.json<{ memories: WrittenMemory[] }>().memories[0]!;
    expect(memory).toMatchObject({ status: 'active', derivation: 'repaired' });
    const record = await app.services.memories.get(tenant, memory.id);
    expect(record?.provenance.repairedEventIds).toEqual([job, link].sort());
    expect(record?.derivation).toMatchObject({
      label: 'repaired',
      citationOnly: 'unsupported',
      expanded: 'supported',
      mode: 'enforce',
    });
    expect(await app.services.lineage.childrenOf(tenant, link!)).toEqual([memory.id]);
    // Search tells a reader it was repaired: a flag and counts, not the evidence.
    const search = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
      payload: { query: 'Berlin Siemens' },
    });
    const hit = search
      .json<{ results: { memory: { id: string; derivationAudit?: unknown } }[] }>()
      .results.find((r) => r.memory.id === memory.id);
    expect(hit?.memory.derivationAudit).toEqual({
      label: 'repaired',
      admittedBy: 'repair',
      obligations: 3,
      notSupported: 0,
      repairedEvidence: 2,
    });
  });

  it('flags a correcting write that drops the time and the hedge of the memory it supersedes, and tells readers', async () => {
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const externalId = uniqueId('ext');
    const first = await write(app, tenant, {
      events: [sampleEvent({ subjects: [subject], externalId, content: 'I might move to Berlin in March.' })],
      memories: [
        sampleMemory({
          subjects: [subject],
          kind: 'fact',
          attribute: 'residence',
          content: 'The user might move to Berlin in March.',
        }),
      ],
    });
    expect(first.json<{ memories: WrittenMemory[] }>().memories[0], first.body).toMatchObject({
      status: 'active',
      derivation: 'supported',
    });
    const earlier = first.json<{ memories: WrittenMemory[] }>().memories[0]!.id;
    const second = await write(app, tenant, {
      events: [sampleEvent({ subjects: [subject], externalId, content: 'I moved to Berlin.' })],
      memories: [
        sampleMemory({
          subjects: [subject],
          kind: 'fact',
          attribute: 'residence',
          content: 'The user moved to Berlin.',
        }),
      ],
    });
    const later = second.json<{ memories: WrittenMemory[] }>().memories[0]!;
    expect(later, second.body).toMatchObject({ status: 'active', derivation: 'supported' });
    expect((await app.services.memories.get(tenant, earlier))?.status).toBe('superseded');
    expect((await app.services.memories.get(tenant, later.id))?.qualifierDrift).toEqual({
      from: earlier,
      dropped: ['time', 'uncertainty'],
    });
    const read = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/memories/${later.id}`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
    });
    expect(
      read.json<{ derivationAudit?: { qualifiersDropped?: string[] } }>().derivationAudit?.qualifiersDropped,
    ).toEqual(['time', 'uncertainty']);
  });

  it('holds a composition whose relation history never states for sign-off, its obligations shown in the queue', async () => {
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const response = await write(app, tenant, {
      events: [
        sampleEvent({ subjects: [subject], content: 'I moved to Berlin.' }),
        sampleEvent({ subjects: [subject], content: 'I started a new job at Siemens.' }),
      ],
      memories: [
        memoryAbout(subject, { provenance: { eventIds: ['#0', '#1'], parentIds: [], derivationRule: 'compose' } }),
      ],
    });
    expect(response.statusCode, response.body).toBe(201);
    const memory = response.json<{ memories: WrittenMemory[] }>().memories[0]!;
    expect(memory).toMatchObject({ status: 'candidate', derivation: 'unsupported' });
    const eventIds = response.json<{ events: { id: string }[] }>().events.map((e) => e.id);
    const item = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/review-queue/${memory.id}`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
    });
    expect(item.statusCode, item.body).toBe(200);
    type Shown = { kind: string; label: string; evidenceIds: string[]; text?: string; between?: string[] };
    const readItem = async () =>
      (
        await app.request({
          method: 'GET',
          url: `/v1/tenants/${tenant}/review-queue/${memory.id}`,
          token: await app.token(tenant, ['reviewer'], 'rita'),
        })
      ).json<{ derivation: { obligations: Shown[] } }>().derivation;
    const derivation = item.json<{
      derivation: {
        label: string;
        evidenceIds: string[];
        obligations: { kind: string; label: string; evidenceIds: string[]; text?: string }[];
      };
    }>().derivation;
    expect(derivation.label).toBe('unsupported');
    expect(derivation.evidenceIds.sort()).toEqual([...eventIds].sort());
    expect(derivation.obligations.map((o) => [o.kind, o.label])).toEqual([
      ['claim', 'supported'],
      ['claim', 'supported'],
      ['relation', 'insufficient'],
    ]);
    expect(derivation.obligations[0]!.text).toBe('The user moved to Berlin');
    expect(derivation.obligations[0]!.evidenceIds).toEqual([eventIds[0]]);
    // The obligations' places were stored at admission (offsets and ids, no words), and the queue reads them.
    const stored = (await app.services.memories.get(tenant, memory.id))!.derivation!.obligations;
    expect(stored.map((o) => o.span ?? o.between)).toEqual([
      [0, 24],
      [36, 59],
      ['o1', 'o2'],
    ]);
    expect(stored.some((o) => 'text' in o)).toBe(false);
    const shown = (await readItem()).obligations;
    expect(shown[1]).toMatchObject({ kind: 'claim', text: MEMORY.slice(36, 59) });
    expect(shown[2]).toMatchObject({ kind: 'relation', between: ['o1', 'o2'] });
    // A record admitted before places were kept is shown the same, its obligations decomposed on reading.
    await app.runtime.db
      .collection('memories')
      .updateOne(
        { _id: memory.id as never },
        { $set: { 'derivation.obligations': stored.map(({ span: _s, between: _b, of: _o, ...o }) => o) } },
      );
    expect((await readItem()).obligations).toEqual(shown);
    // The sign-off workflow runs for it like any high-impact write.
    const queue = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/review-queue`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
    });
    expect(queue.json<{ items: { id: string }[] }>().items.map((i) => i.id)).toEqual([memory.id]);
  });

  it('refuses a contradicted memory with 409 naming the obligation by id and kind, not its words', async () => {
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const response = await write(app, tenant, {
      events: [
        sampleEvent({ subjects: [subject], content: 'I moved to Berlin in May because I got a new job at Siemens.' }),
      ],
      memories: [
        memoryAbout(subject, { content: 'The user moved to Berlin in March because of the new job at Siemens.' }),
      ],
    });
    expect(response.statusCode, response.body).toBe(409);
    const body = response.json<{ error: { code: string; message: string; field: string } }>();
    expect(body.error.field).toBe('memories.0.content');
    expect(body.error.message).toMatch(/obligation o2 \(time\), contradicted by evt_[0-9a-f]+/);
    expect(body.error.message).toMatch(/derivation-admission v1, rule contradicted-refused/);
    expect(body.error.message).not.toMatch(/Berlin|March|Siemens/);
    expect(await app.services.memories.listByStatus(tenant, 'active', 10)).toEqual([]);
  });

  it('never uses evidence that occurred after the memory was derived', async () => {
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const [moved, job, later] = await history(app, tenant, subject, [
      ['I moved to Berlin.', 1],
      ['I started a new job at Siemens.', 2],
      ['The Siemens job is why I moved.', 20],
    ]);
    const cites = { provenance: { eventIds: [moved], parentIds: [], derivationRule: 'compose' } };
    const early = await write(app, tenant, {
      memories: [memoryAbout(subject, { ...cites, derivedAt: '2026-11-10T00:00:00Z' })],
    });
    expect(early.statusCode, early.body).toBe(201);
    const before = early.json<{ memories: WrittenMemory[] }>().memories[0]!;
    expect(before).toMatchObject({ status: 'candidate', derivation: 'unsupported' });
    const record = await app.services.memories.get(tenant, before.id);
    expect(record?.derivation?.evidenceIds).toEqual([moved, job]);
    expect(record?.derivation?.evidenceIds).not.toContain(later);
    // The same memory derived after the linking turn is repaired by it: the cut-off is what kept it out.
    const late = await write(app, tenant, {
      memories: [memoryAbout(subject, { ...cites, derivedAt: '2026-11-21T00:00:00Z' })],
    });
    expect(late.json<{ memories: WrittenMemory[] }>().memories[0]).toMatchObject({
      status: 'active',
      derivation: 'repaired',
    });
  });

  it('refuses a derivation time in the future, naming the field', async () => {
    const tenant = uniqueTenant();
    const response = await write(app, tenant, {
      events: [sampleEvent()],
      memories: [sampleMemory({ derivedAt: '2999-01-01T00:00:00Z' })],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ error: { message: string } }>().error.message).toMatch(/memories\.0\.derivedAt/);
  });
});

describe('write-time derivation audit over an OpenAI-compatible endpoint (a local STUB server)', () => {
  let app: TestApp;
  let stub: ChatCompletionsStub;
  beforeAll(async () => {
    stub = await startChatCompletionsStub(() => 'hang');
    app = await startTestApp({
      config: {
        LETHE_DERIVATION_AUDIT: 'enforce',
        LETHE_VERIFIER: 'openai-compatible',
        LETHE_VERIFIER_URL: stub.url,
        LETHE_VERIFIER_TIMEOUT_MS: '300',
      },
    });
  });
  afterAll(async () => {
    await app?.close();
    await stub?.close();
  });

  it('a verifier that times out leaves the audit unresolved and the memory waiting for sign-off, never admitted', async () => {
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const response = await write(app, tenant, {
      events: [sampleEvent({ subjects: [subject], content: 'I moved to Berlin because I got a new job at Siemens.' })],
      memories: [memoryAbout(subject)],
    });
    expect(response.statusCode, response.body).toBe(201);
    const memory = response.json<{ memories: WrittenMemory[] }>().memories[0]!;
    expect(memory).toMatchObject({ status: 'candidate', derivation: 'unresolved' });
    const record = await app.services.memories.get(tenant, memory.id);
    expect(record?.derivation).toMatchObject({ unresolvedBecause: 'timeout', verifier: { id: 'openai-compatible' } });
    expect(stub.requests.length).toBeGreaterThan(0);
  });
});
