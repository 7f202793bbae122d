/**
 * Governed retrieval through the API on the real stack: a principal reads its own scope and the tenant's shared
 * one (another principal's note on the same topic never appears, not even counted as a candidate); a held record
 * among the top candidates is refused and the answer refilled to k; statuses follow the intent; the context stays
 * within its budget; what was retrieved and exposed is traced, and an erasure reduces that trace to keyed hashes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { ordinalWord, sampleEvent, sampleMemory, statedBatch } from '../../support/samples.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { readAhead } from '../../../src/retrieval/retrieval-service.js';

interface Item {
  id: string;
  status: string;
  scope: string | null;
  content: string;
  tokens: number;
  validTo: string | null;
}
interface Answer {
  retrievalId: string;
  items: Item[];
  counts: {
    candidates: number;
    admissible: number;
    refused: number;
    unresolved: number;
    leftOutForBudget: number;
    axes: Record<'scope' | 'policy' | 'lifecycle', { refused: number; unresolved: number }>;
  };
  short: boolean;
  budget: { tokens: number; used: number };
}

describe('governed retrieval', () => {
  let app: TestApp;
  let tenant: string;
  const canary = `parcel${randomUUID().slice(0, 8)}`;
  const own: string[] = [];
  let shared: string;
  let theirs: string[];

  const write = async (principal: string, memories: object[]) => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], principal),
      // Each memory cites an event that states it: the derivation audit admits them as written.
      payload: statedBatch(memories as Record<string, unknown>[], [
        sampleEvent({ subjects: ['customer-ana'], content: `Ana's ${canary} notes.` }),
      ]),
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ memories: { id: string }[] }>().memories.map((m) => m.id);
  };
  const memory = (i: number, over: Record<string, unknown> = {}) =>
    sampleMemory({
      subjects: ['customer-ana'],
      attribute: `fact-${i}`,
      kind: 'fact',
      content: `The ${canary} delivery ${ordinalWord(i)} goes to the Porto depot on weekday ${ordinalWord(i)}.`,
      ...over,
    });
  const retrieve = async (principal: string, body: object, roles: string[] = ['agent']) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrieve`,
      token: await app.token(tenant, roles as never, principal),
      payload: { query: `${canary} delivery Porto depot`, ...body },
    });

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    own.push(
      ...(await write(
        'agent-a',
        Array.from({ length: 10 }, (_, i) => memory(i)),
      )),
    );
    shared = (
      await write('agent-a', [memory(10, { scope: 'tenant', content: `Shared: the ${canary} depot is in Porto.` })])
    )[0]!;
    // Another principal's notes on the very same topic, with the query's words in them.
    theirs = await write(
      'agent-b',
      Array.from({ length: 6 }, (_, i) =>
        memory(20 + i, { content: `${canary} delivery Porto depot, agent b note ${i}.` }),
      ),
    );
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  it("returns the reader's own and shared records, never another principal's, which are filtered in the query", async () => {
    const response = await retrieve('agent-a', { k: 50 });
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json<Answer>();
    const ids = answer.items.map((i) => i.id);
    expect(ids.sort()).toEqual([...own, shared].sort());
    expect(ids.some((id) => theirs.includes(id))).toBe(false);
    // Pushed down: the other principal's records never even became candidates.
    expect(answer.counts.candidates).toBe(own.length + 1);
    expect(answer.counts.axes.scope).toEqual({ refused: 0, unresolved: 0 });
    expect(answer.short).toBe(true);
    expect(new Set(answer.items.map((i) => i.scope))).toEqual(new Set(['principal:agent-a', 'tenant']));

    const b = (await retrieve('agent-b', { k: 50 })).json<Answer>();
    expect(b.items.map((i) => i.id).sort()).toEqual([...theirs, shared].sort());
    // A reviewer reading for review reads the whole tenant.
    const reviewer = (await retrieve('rita', { k: 50, purpose: 'review' }, ['reviewer'])).json<Answer>();
    expect(reviewer.items).toHaveLength(own.length + 1 + theirs.length);
  });

  it('re-reads from the store only as many candidates as the answer still needs, in rank order', async () => {
    const answer = (await retrieve('agent-a', { k: 5 })).json<Answer>();
    expect(answer.items).toHaveLength(5);
    // Eleven admissible records match; the index was asked for ten, and only the first readAhead(5) were re-read.
    expect(answer.counts.candidates).toBe(readAhead(5));
    expect(answer.counts.refused + answer.counts.unresolved).toBe(0);
  });

  it('refuses held records among the top candidates and refills the answer to k from deeper candidates', async () => {
    const top = (await retrieve('agent-a', { k: 5 })).json<Answer>().items.map((i) => i.id);
    expect(top).toHaveLength(5);
    // The erasure's authorise step restricts records under a legal hold: the top five are held now.
    await app.services.memories.restrict(tenant, top, `hold_${randomUUID()}`);
    try {
      const answer = (await retrieve('agent-a', { k: 5 })).json<Answer>();
      expect(answer.items).toHaveLength(5);
      expect(answer.items.some((i) => top.includes(i.id))).toBe(false);
      expect(answer.counts.axes.lifecycle.refused).toBeGreaterThanOrEqual(5);
      expect(answer.short).toBe(false);
    } finally {
      await app.runtime.db.collection(Collections.recordMarks).deleteMany({ tenant, kind: 'hold' });
    }
  });

  it('keeps the context within its budget and counts what did not fit', async () => {
    const answer = (await retrieve('agent-a', { k: 11, budgetTokens: 60 })).json<Answer>();
    expect(answer.budget.used).toBeLessThanOrEqual(60);
    expect(answer.items.reduce((n, i) => n + i.tokens, 0)).toBe(answer.budget.used);
    expect(answer.items.length + answer.counts.leftOutForBudget).toBe(11);
    expect(answer.counts.leftOutForBudget).toBeGreaterThan(0);
  });

  it('answers current questions without superseded records, history and as-of questions with them', async () => {
    const [old] = await write('agent-a', [
      memory(30, { content: `Old: the ${canary} depot was in Lisbon.`, validFrom: '2025-01-01T00:00:00Z' }),
    ]);
    await app.services.memories.transition(tenant, old!, 'active', 'superseded', 'test:corrected');
    const ids = async (body: object) =>
      (await retrieve('agent-a', { k: 50, ...body })).json<Answer>().items.map((i) => i.id);
    expect(await ids({ intent: 'current' })).not.toContain(old);
    expect(await ids({ intent: 'history' })).toContain(old);
    const asOf = await ids({ intent: 'as-of', asOf: '2025-06-01T00:00:00Z' });
    expect(asOf).toContain(old);
    // None of the others was valid yet in June 2025.
    expect(asOf).toHaveLength(1);
    await app.services.memories.transition(tenant, own[9]!, 'active', 'deleted', 'test:erasure-mark');
    expect(await ids({ intent: 'history' })).not.toContain(own[9]);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [object, string][] = [
      [{ k: 0 }, 'k'],
      [{ k: 10_000 }, 'k'],
      [{ budgetTokens: 0 }, 'budgetTokens'],
      [{ intent: 'as-of' }, 'asOf'],
      [{ intent: 'current', asOf: '2026-01-01T00:00:00Z' }, 'asOf'],
      [{ query: '' }, 'query'],
      [{ query: 'x'.repeat(5000) }, 'query'],
      [{ query: { match_all: {} } }, 'query'],
      [{ scope: 'all' }, ''],
    ];
    for (const [body, field] of cases) {
      const response = await retrieve('agent-a', body);
      expect(response.statusCode, `${JSON.stringify(body)}: ${response.body}`).toBe(400);
      if (field) expect(response.json<{ error: { field: string } }>().error.field).toBe(field);
    }
  });

  it('traces what reached a prompt, and an erasure reduces the trace to keyed hashes', async () => {
    const answer = (await retrieve('agent-a', { k: 3 })).json<Answer>();
    const [first, second] = answer.items.map((i) => i.id) as [string, string];
    const report = (principal: string, memoryIds: string[]) =>
      app.token(tenant, ['agent'], principal).then((token) =>
        app.request({
          method: 'POST',
          url: `/v1/tenants/${tenant}/retrievals/${answer.retrievalId}/exposures`,
          token,
          payload: { memoryIds },
        }),
      );
    expect((await report('agent-b', [first])).statusCode).toBe(403);
    const foreign = await report('agent-a', [first, theirs[0]!]);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json<{ error: { field: string } }>().error.field).toBe('memoryIds.1');
    expect((await report('agent-a', [first])).statusCode, 'accepted').toBe(201);

    const trace = async (id: string) => {
      const response = await app.request({
        method: 'GET',
        url: `/v1/tenants/${tenant}/memories/${id}/exposures`,
        token: await app.token(tenant, ['dpo'], 'dpo-1'),
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ retrievals: { retrievalId: string; exposedAt: string | null }[] }>().retrievals;
    };
    const traced = (await trace(first)).find((r) => r.retrievalId === answer.retrievalId);
    expect(traced?.exposedAt).not.toBeNull();
    expect((await trace(second)).find((r) => r.retrievalId === answer.retrievalId)?.exposedAt).toBeNull();
    // The query text is never kept.
    const stored = await app.runtime.db
      .collection(Collections.retrievals)
      .findOne({ _id: answer.retrievalId as never });
    expect(JSON.stringify(stored)).not.toContain(canary);

    // A read by id is a retrieval too, and the certificate says which route each took.
    const byId = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/memories/${first}`,
      token: await app.token(tenant, ['agent'], 'agent-a'),
    });
    expect(byId.statusCode, byId.body).toBe(200);
    const retrievalsOfFirst = (await trace(first)).length;
    const requestId = await fileErasure(app, tenant, { memoryIds: [first] });
    // The event the memory was extracted from repeats it: the DPO leaves it, and the certificate names it.
    const done = await completeErasure(app, tenant, requestId, 'certify');
    expect(done.state).toBe('completed');
    // The certificate says the record had reached agents, and when: counts and times, no ids of retrievals.
    const certificate = await app.services.certificates.get(tenant, done.certificateIds!.at(-1)!);
    expect(retrievalsOfFirst).toBeGreaterThan(1);
    expect(certificate?.exposure).toMatchObject({
      retrievals: retrievalsOfFirst,
      prompts: 1,
      firstExposedAt: traced!.exposedAt,
      lastExposedAt: traced!.exposedAt,
      byRoute: { retrieve: retrievalsOfFirst - 1, memory: 1 },
    });
    expect(JSON.stringify(certificate)).not.toContain(answer.retrievalId);
    // The DPO's view of the request says the same.
    const view = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/erasure-requests/${requestId}`,
      token: await app.token(tenant, ['dpo'], 'dpo-1'),
    });
    expect(view.json<{ exposure: unknown }>().exposure).toEqual(certificate!.exposure);
    expect(await trace(first)).toEqual([]);
    const exposures = app.runtime.db.collection(Collections.exposures);
    expect(await exposures.countDocuments({ tenant, memoryId: first })).toBe(0);
    expect(JSON.stringify(await exposures.find({ tenant }).toArray())).not.toContain(first);
    // Still countable: the retrieval's exposure survives under a keyed hash.
    expect(await exposures.countDocuments({ tenant, retrievalId: answer.retrievalId, erased: true })).toBe(1);
  }, 240_000);
});
