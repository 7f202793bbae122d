/**
 * Every erased sentence is looked for, not a sample of them. Alice's erasure spans more than 50 memories and 50
 * events, hundreds of sentences; Bob's memory repeats her 300th sentence, well past any sample of the first records.
 * The verification finds Bob's copy, the request waits for the DPO, and the certificate names the copy by id and says
 * how many of the erased sentences each probe looked for.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { ordinalWord, sampleMemory, statedBatch } from '../../support/samples.js';

/** Memories of Alice, each cited by an event of its own that states it: more than 50 of each. */
const MEMORIES = 64;
/** Sentences of five words or more per memory. */
const SENTENCES = 5;
/** Memories written per batch. */
const BATCH = 16;

describe('an erasure probes every erased sentence', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  async function write(tenant: string, writer: string, memories: Record<string, unknown>[]) {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], writer),
      payload: statedBatch(memories),
    });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json<{ memories: { id: string; status: string }[]; events: { id: string }[] }>();
    for (const m of body.memories) expect(m.status).toBe('active');
    return body;
  }

  it("finds Bob's copy of the 300th sentence of Alice's erasure and names it in the certificate", async () => {
    const tenant = uniqueTenant();
    const tag = randomUUID().slice(0, 8);
    // Sentence k of memory i, distinct across the whole erasure (words, not numbers: the derivation audit reads
    // differing numbers about one subject as ambiguous).
    const sentence = (i: number, k: number) =>
      `Alice filed note ${ordinalWord(i)} under heading ${ordinalWord(k)} with tag ${tag}${ordinalWord(i)}${ordinalWord(k)}.`;
    const contents = Array.from({ length: MEMORIES }, (_, i) =>
      Array.from({ length: SENTENCES }, (_, k) => sentence(i, k)).join(' '),
    );
    const sentences = contents.flatMap((_, i) => Array.from({ length: SENTENCES }, (_, k) => sentence(i, k)));
    const the300th = sentences[299]!;
    for (let at = 0; at < MEMORIES; at += BATCH) {
      await write(
        tenant,
        'agent-a',
        contents.slice(at, at + BATCH).map((content, j) =>
          sampleMemory({
            subjects: ['alice'],
            kind: 'fact',
            attribute: `note-${ordinalWord(at + j)}`,
            content,
            scope: 'tenant',
          }),
        ),
      );
    }
    const copy = await write(tenant, 'agent-b', [
      sampleMemory({
        subjects: ['bob'],
        kind: 'fact',
        attribute: 'overheard',
        content: `Bob was told this: ${the300th} He did not write it down.`,
        scope: 'tenant',
      }),
    ]);
    const control = await write(tenant, 'agent-b', [
      sampleMemory({
        subjects: ['bob'],
        kind: 'preference',
        attribute: 'call-time',
        content: 'Bob prefers to be called in the afternoon after work.',
        scope: 'tenant',
      }),
    ]);
    const copyIds = [copy.memories[0]!.id, copy.events[0]!.id];

    const requestId = await fileErasure(app, tenant, { subjectId: 'alice' });
    const waiting = await waitForState(app, tenant, requestId, ['needs-dpo', 'completed', 'needs-operator'], 180_000);
    expect(waiting.state, `findings: ${JSON.stringify(waiting.findings ?? [])}`).toBe('needs-dpo');
    const found = new Map((waiting.findings ?? []).map((f) => [f.id, f]));
    // Bob's memory and the event that states it repeat the sentence; the control repeats nothing of Alice's.
    expect([...found.keys()].sort()).toEqual([...copyIds].sort());
    expect(found.get(copy.memories[0]!.id)!.probes).toEqual(
      expect.arrayContaining(['text:elasticsearch', 'text:mongodb', 'text:api']),
    );
    expect(found.get(copy.events[0]!.id)!.probes).toEqual(expect.arrayContaining(['text:mongodb']));
    expect(found.has(control.memories[0]!.id)).toBe(false);

    const decided = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/erasure-requests/${requestId}/findings`,
      token: await app.token(tenant, ['dpo'], 'dpo-1'),
      payload: { decision: 'certify', reason: "Bob's own record of what he was told" },
    });
    expect(decided.statusCode, decided.body).toBe(202);
    expect((await waitForState(app, tenant, requestId, ['completed', 'needs-operator'], 180_000)).state).toBe(
      'completed',
    );

    const [certificate] = await app.services.certificates.byRequest(tenant, requestId);
    expect(certificate!.status).toBe('complete');
    // The closure spans more than 50 memories and 50 events.
    expect(certificate!.closure.ids.filter((id) => id.startsWith('mem_')).length).toBeGreaterThan(50);
    expect(certificate!.closure.ids.filter((id) => id.startsWith('evt_')).length).toBeGreaterThan(50);
    expect(certificate!.closure.ids).not.toEqual(expect.arrayContaining([copyIds[0]]));
    // The copy is named, by id, with the probes that reached it.
    expect(certificate!.findings).toEqual(
      expect.arrayContaining(
        copyIds.map((id) => expect.objectContaining({ id, resolution: 'stated', probes: expect.any(Array) })),
      ),
    );
    // Every sentence of the erasure was looked for, and the certificate says how many there were.
    const text = certificate!.probes.filter((p) => p.kind === 'text');
    expect(text.map((p) => p.target).sort()).toEqual(['api', 'elasticsearch', 'mongodb']);
    // The governed search's probe checked every sentence against all it could serve (Alice's records are gone; Bob's
    // two remain), and searched only a few of them as queries: the copy was not found by being searched for.
    const api = text.find((p) => p.target === 'api')!;
    expect(api.served).toBe(2);
    expect(api.searched).toBeLessThanOrEqual(64);
    expect(api.searched).toBeLessThan(api.checked);
    for (const probe of text) {
      expect(probe.sentences, probe.target).toBeGreaterThanOrEqual(sentences.length);
      expect(probe.checked, probe.target).toBe(probe.sentences);
      expect(probe.outside, probe.target).toBeGreaterThan(0);
    }
    // The vector probe says what fraction of the sentences it embedded.
    const vector = certificate!.probes.find((p) => p.kind === 'vector')!;
    expect(vector.sentences).toBe(text[0]!.sentences);
    expect(vector.checked).toBeLessThanOrEqual(vector.sentences!);
    // Nothing of the sentences enters the certificate.
    expect(JSON.stringify(certificate)).not.toContain(tag);
    const verify = certificate!.steps.find((s) => s.step === 'verify')!;
    console.info(
      `verify: ${Date.parse(verify.finishedAt) - Date.parse(verify.startedAt)} ms for ${text[0]!.sentences} sentences`,
    );
  }, 300_000);
});
