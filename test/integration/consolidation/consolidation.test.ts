/**
 * Consolidation builds views through admission like any write: one per subject and attribute of a principal's (or
 * the tenant's shared) active memories, keyed by its inputs, rule and model, so a re-run builds nothing twice. A view
 * never claims more trust than its inputs give it, keeps their taint, never reads a quarantined input, and dies with
 * any of its inputs; a re-run after an erasure never brings the erased content back.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { CONSOLIDATION_RULE } from '../../../src/substrate/views/consolidation-plan.js';

interface Run {
  built: number;
  existing: number;
  tombstoned: number;
  views: { id: string; inputs: number; status: string; refusal?: string }[];
}

// Each run writes its views through the ingestion workflow one after another: minutes, not seconds, on a loaded machine.
describe('consolidation into views', { timeout: 240_000 }, () => {
  let app: TestApp;
  let tenant: string;
  const term = `cz${randomUUID().slice(0, 6)}`;
  const subject = `customer-${term}`;

  const token = (roles: string[], id: string) => app.token(tenant, roles as never, id);
  const write = async (by: string, payload: object) => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await token(['agent'], by),
      payload,
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ memories: { id: string; status: string }[] }>().memories;
  };
  /** One event and the memory extracted from it. */
  const fact = (content: string, overrides: Record<string, unknown> = {}, event: Record<string, unknown> = {}) => ({
    events: [sampleEvent({ subjects: [subject], content, ...event })],
    memories: [
      sampleMemory({
        subjects: [subject],
        attribute: 'contact-channel',
        content,
        provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-preference' },
        ...overrides,
      }),
    ],
  });
  const consolidate = async (by: string, body: object, roles = ['agent']) => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/consolidations`,
      token: await token(roles, by),
      payload: body,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Run>();
  };
  const record = (id: string) => app.services.memories.get(tenant, id);

  beforeAll(async () => {
    // Calls wait for their run to end however loaded the machine: the answer of a run still going is tested below.
    app = await startTestApp({ config: { LETHE_CONSOLIDATION_WAIT_MS: '600000' } });
    tenant = uniqueTenant();
  });
  afterAll(async () => {
    await app?.close();
  });

  let summary: string;
  let dedup: string;
  let inputs: string[];

  it('builds a view of what a subject’s records say alike and a summary of what they say, from the caller’s memories', async () => {
    inputs = [
      ...(await write('agent-1', fact(`Prefers e-mail contact about ${term}.`, { confidence: 0.9 }))),
      ...(await write('agent-1', fact(`Prefers e-mail contact about ${term}.`, { confidence: 0.8 }))),
      ...(await write(
        'agent-1',
        fact(`Lives in Lisbon near ${term}.`, {
          attribute: 'city',
          kind: 'fact',
          confidence: 0.7,
          validFrom: '2026-11-02T10:00:00Z',
        }),
      )),
    ].map((m) => m.id);
    // Another agent's memory of the same subject is not the caller's to consolidate.
    const [other] = await write('agent-2', fact(`Works nights near ${term}.`, { attribute: 'shift' }));

    const run = await consolidate('agent-1', { namespace: 'support', trigger: 'session-end' });
    expect(run).toMatchObject({ built: 2, existing: 0, tombstoned: 0 });
    expect(run.views.map((v) => [v.inputs, v.status]).sort()).toEqual([
      [2, 'active'],
      [3, 'active'],
    ]);
    dedup = run.views.find((v) => v.inputs === 2)!.id;
    summary = run.views.find((v) => v.inputs === 3)!.id;

    const built = await record(summary);
    expect(built).toMatchObject({
      kind: 'summary',
      status: 'active',
      scope: 'principal:agent-1',
      writtenBy: 'agent-1',
      subjects: [subject],
      trustTier: 1,
      attribute: null,
      provenance: { derivationRule: CONSOLIDATION_RULE, modelVersion: 'extractive@1' },
    });
    expect([...built!.provenance.parentIds].sort()).toEqual([...inputs].sort());
    // Trust is not amplified: the lowest confidence of the inputs.
    expect(built!.confidence).toBe(0.7);
    // Extractive: each distinct content once, oldest first.
    expect(built!.content).toBe(`Prefers e-mail contact about ${term}. Lives in Lisbon near ${term}.`);
    expect(built!.provenance.parentIds).not.toContain(other!.id);
    // The same writer twice is one source: the lowest confidence, not the highest.
    expect(await record(dedup)).toMatchObject({
      kind: 'view',
      content: `Prefers e-mail contact about ${term}.`,
      confidence: 0.8,
    });
    // Another agent never reads them.
    for (const id of [summary, dedup]) {
      const stranger = await app.request({
        method: 'GET',
        url: `/v1/tenants/${tenant}/memories/${id}?intent=history`,
        token: await token(['agent'], 'agent-2'),
      });
      expect(stranger.statusCode).toBe(404);
    }
    const audited = [];
    for await (const entry of app.services.audit.entries(tenant))
      if (entry.target === summary && entry.action === 'memory.created') audited.push(entry.actor);
    expect(audited).toEqual(['agent-1']);
  });

  it('builds nothing twice: a re-run over the same inputs finds the views by their keys', async () => {
    const again = await consolidate('agent-1', { namespace: 'support', trigger: 'manual' });
    expect(again).toMatchObject({ built: 0, existing: 2, views: [] });
    expect((await app.services.lineage.childrenOf(tenant, inputs[0]!)).sort()).toEqual([dedup, summary].sort());
  });

  it('refuses a caller other than an admin consolidating the tenant’s shared memories, naming scope', async () => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/consolidations`,
      token: await token(['agent'], 'agent-1'),
      payload: { namespace: 'support', scope: 'tenant', trigger: 'manual' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ error: { field: 'scope' } });
    const bad = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/consolidations`,
      token: await token(['agent'], 'agent-1'),
      payload: { namespace: 'Support!', trigger: 'whenever' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/namespace|trigger/);
    // Odd bytes and huge values in every field: 400 naming the field, and no stack trace.
    const odd: [object, string][] = [
      [{ namespace: 'support\u0000', trigger: 'manual' }, 'namespace'],
      [{ namespace: 'x'.repeat(100_000), trigger: 'manual' }, 'namespace'],
      [{ namespace: 'support', trigger: 'manual\u0000' }, 'trigger'],
      [{ namespace: 'support', trigger: 'manual', scope: 'x'.repeat(10_000) }, 'scope'],
      [{ namespace: 'support', trigger: 'manual', extra: 1 }, 'extra'],
    ];
    for (const [payload, field] of odd) {
      const refused = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/consolidations`,
        token: await token(['agent'], 'agent-1'),
        payload,
      });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.body).toContain(field);
      expect(refused.body).not.toMatch(/\bat \S+\.(ts|js):\d+/);
    }
  });

  it('keeps the highest confidence only when independent writers agree', async () => {
    const agreeing = `Prefers chat contact about ${term}x.`;
    const shared = (by: string, confidence: number) =>
      write(
        by,
        fact(
          agreeing,
          { confidence, scope: 'tenant', subjects: [`${subject}-s`] },
          { subjects: [`${subject}-s`], scope: 'tenant' },
        ),
      );
    await shared('agent-1', 0.6);
    await shared('agent-2', 0.9);
    const run = await consolidate('admin-1', { namespace: 'support', scope: 'tenant', trigger: 'manual' }, ['admin']);
    expect(run.built).toBe(1);
    expect(await record(run.views[0]!.id)).toMatchObject({
      kind: 'view',
      scope: 'tenant',
      content: agreeing,
      confidence: 0.9,
    });
  });

  it('never reads a quarantined input, and a summary of promoted external content keeps its taint and the lowest confidence', async () => {
    const who = `agent-q${term}`;
    const tool = (content: string, attribute: string, confidence: number) =>
      write(
        who,
        fact(
          content,
          { confidence, attribute, subjects: [`${subject}-q`] },
          { subjects: [`${subject}-q`], origin: 'tool-output', source: 'crm-tool' },
        ),
      );
    const held = [
      ...(await tool(`Ships to depot A about ${term}.`, 'depot', 0.8)),
      ...(await tool(`Delivers in the morning about ${term}.`, 'delivery-window', 0.6)),
    ];
    expect(held.map((m) => m.status)).toEqual(['candidate', 'candidate']);
    expect(await consolidate(who, { namespace: 'support', trigger: 'task-end' })).toMatchObject({
      built: 0,
      views: [],
    });

    for (const m of held) {
      const decided = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/review-queue/${m.id}/decision`,
        token: await token(['reviewer'], 'rita'),
        payload: { decision: 'approve', reason: 'checked against the carrier' },
      });
      expect(decided.statusCode, decided.body).toBe(200);
    }
    const run = await consolidate(who, { namespace: 'support', trigger: 'task-end' });
    expect(run.built).toBe(1);
    const tainted = await record(run.views[0]!.id);
    // Derived from promoted records: tainted, not quarantined again, confidence bound by the weakest input.
    expect(tainted).toMatchObject({ kind: 'summary', status: 'active', taint: ['external-content'], confidence: 0.6 });
    expect(tainted!.quarantinedFor).toBeUndefined();
  });

  it('erases a view with any of its inputs and no other, and a re-run never brings the erased content back', async () => {
    const erased = inputs[2]!; // "Lives in Lisbon"
    const requestId = await fileErasure(app, tenant, { memoryIds: [erased] });
    // The DPO certifies rather than extends to copies found: the summary's other sentence is found in the e-mail
    // records, which are not the erased fact.
    await completeErasure(app, tenant, requestId, 'certify');
    expect(await record(erased)).toBeNull();
    expect(await record(summary)).toBeNull();
    // The view of the e-mail preference did not read the erased record: it stays.
    expect(await record(dedup)).toMatchObject({ status: 'active' });

    const rerun = await consolidate('agent-1', { namespace: 'support', trigger: 'conflict' });
    expect(rerun).toMatchObject({ built: 0, existing: 1 });
    const left = await app.services.memories.allBySubject(tenant, subject);
    for (const r of left) expect(r.content).not.toContain('Lisbon');
  });

  it('does not rebuild a view that was itself erased, from inputs still there', async () => {
    const who = `agent-v${term}`;
    const s = `${subject}-v`;
    const one = (content: string, attribute: string) =>
      write(who, fact(content, { subjects: [s], attribute }, { subjects: [s] }));
    await one(`Likes morning calls about ${term}.`, 'call-time');
    await one(`Speaks Portuguese about ${term}.`, 'language');
    const first = await consolidate(who, { namespace: 'support', trigger: 'manual' });
    expect(first.built).toBe(1);
    const requestId = await fileErasure(app, tenant, { memoryIds: [first.views[0]!.id] });
    await completeErasure(app, tenant, requestId, 'certify');
    expect(await record(first.views[0]!.id)).toBeNull();
    const rerun = await consolidate(who, { namespace: 'support', trigger: 'manual' });
    expect(rerun).toMatchObject({ built: 0, tombstoned: 1, views: [] });
  });
  it('leaves no view of a subject erased while a run builds it, whichever lands first', async () => {
    for (const delayMs of [0, 150, 600]) {
      const who = `agent-r${delayMs}${term}`;
      const s = `${subject}-r${delayMs}`;
      const canary = `CANARY-${randomUUID().slice(0, 8)}`;
      const one = (content: string, attribute: string) =>
        write(who, fact(content, { subjects: [s], attribute }, { subjects: [s] }));
      await one(`Collects parcels at locker ${canary}.`, 'locker');
      await one(`Speaks French about ${term}.`, 'language');
      const running = consolidate(who, { namespace: 'support', trigger: 'session-end' });
      await new Promise((r) => setTimeout(r, delayMs));
      const requestId = await fileErasure(app, tenant, { subjectId: s });
      const run = await running;
      await completeErasure(app, tenant, requestId, 'extend');
      // Whatever the run built or was refused, nothing of the subject is left: no input, no view, no canary.
      expect(await app.services.memories.allBySubject(tenant, s)).toEqual([]);
      for (const v of run.views) expect(await record(v.id)).toBeNull();
      const rerun = await consolidate(who, { namespace: 'support', trigger: 'manual' });
      expect(rerun).toMatchObject({ built: 0, views: [] });
    }
  });
});

describe('a consolidation run longer than the call waits', { timeout: 240_000 }, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { LETHE_CONSOLIDATION_WAIT_MS: '500', LETHE_CONSOLIDATION_PAUSE_MS: '3000' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is answered 202 with its workflow id while it goes on, and a second call joins it', async () => {
    const tenant = uniqueTenant();
    const token = await app.token(tenant, ['agent'], 'agent-1');
    for (const s of ['a', 'b'])
      for (const [attribute, content] of [
        ['city', `Lives in Faro ${s}.`],
        ['language', `Speaks Dutch ${s}.`],
      ]) {
        const written = await app.request({
          method: 'POST',
          url: `/v1/tenants/${tenant}/batches`,
          token,
          payload: {
            events: [sampleEvent({ subjects: [`subject-${s}`], content })],
            memories: [sampleMemory({ subjects: [`subject-${s}`], attribute, kind: 'fact', content })],
          },
        });
        expect(written.statusCode, written.body).toBe(201);
      }
    const call = () =>
      app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/consolidations`,
        token,
        payload: { namespace: 'support', trigger: 'session-end' },
      });
    const first = await call();
    expect(first.statusCode, first.body).toBe(202);
    const { state, workflowId } = first.json<{ state: string; workflowId: string }>();
    expect(state).toBe('running');
    // Two views with a 3 s pause between them: the run is still going, and a second call joins it.
    const second = await call();
    expect(second.statusCode).toBe(202);
    expect(second.json()).toMatchObject({ state: 'running', workflowId });
    const result = await app.worker.client.workflow.getHandle(workflowId).result();
    expect(result).toMatchObject({ built: 2 });
  });
});
