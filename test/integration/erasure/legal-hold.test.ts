import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import {
  buildSubjectGraph,
  fileErasure,
  searchAsWriter,
  waitForState,
  type SubjectGraph,
} from '../../support/erasure-fixture.js';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { waitForMessage } from '../../../stack/smtp/mailbox.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { admittedRecord } from '../../../src/ingestion/admit-batch.js';
import { MemoryInputSchema } from '../../../src/ingestion/write-schemas.js';

const stack = loadStackConfig();

/**
 * A legal hold on part of a subject's data: the erasure removes everything else, keeps the held records
 * readable by the legal role only, says `partial` with the hold id, and finishes once legal releases the hold.
 */
describe('erasure under a legal hold', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let holdId: string;
  let requestId: string;
  /** Both depth-1 memories and the event the first was extracted from. */
  let held: string[];
  /** The rest of the closure: the summary, the depth-3 view, the collateral summary and the other event. */
  let erasedFirst: string[];

  const get = async (kind: 'memories' | 'events', id: string, token: string) =>
    app.request({ method: 'GET', url: `/v1/tenants/${graph.tenant}/${kind}/${id}`, token });
  const kindOf = (id: string) => (id.startsWith('evt_') ? 'events' : 'memories');
  const inMongo = async (ids: string[]) => [
    ...(await app.services.memories.getMany(graph.tenant, ids)).map((m) => m._id),
    ...(await app.services.events.getMany(graph.tenant, ids)).map((e) => e._id),
  ];

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    held = [graph.memories[0]!, graph.memories[1]!, graph.events[0]!];
    erasedFirst = [graph.memories[2]!, graph.memories[3]!, graph.collateral, graph.events[1]!];
    // Positive control: before the hold and the erasure, the writer's search serves the held records.
    expect(await searchAsWriter(app, graph, `codeword ${graph.canary} invoices e-mail`)).toEqual(
      expect.arrayContaining([graph.memories[0], graph.memories[1]]),
    );
    const legal = await app.token(graph.tenant, ['legal'], 'counsel-1');
    const placed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/legal-holds`,
      token: legal,
      payload: { scope: { recordIds: held }, caseRef: 'case-2026-017' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    holdId = placed.json<{ id: string }>().id;
    requestId = await fileErasure(app, graph.tenant, { subjectId: graph.subject });
    const settled = await waitForState(app, graph.tenant, requestId, [
      'partial',
      'completed',
      'needs-operator',
      'rejected',
    ]);
    expect(settled.state).toBe('partial');
  }, 240_000);
  afterAll(async () => {
    await app?.close();
  });

  it('refuses a hold placed by an agent with 403 and audits the refusal', async () => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/legal-holds`,
      token: await app.token(graph.tenant, ['agent'], 'agent-7'),
      payload: { scope: { subjectId: graph.subject }, caseRef: 'case-x' },
    });
    expect(response.statusCode).toBe(403);
    const refusals = [];
    for await (const entry of app.services.audit.entries(graph.tenant)) {
      if (entry.action === 'access.refused' && entry.actor === 'agent-7') refusals.push(entry);
    }
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.details).toMatchObject({ requested: 'hold.manage', status: 403 });
    expect(await app.services.holds.active(graph.tenant)).toHaveLength(1);
  });

  it('leaves the request partial with one partial certificate naming the hold and what it exempted', async () => {
    const status = await app.request({
      method: 'GET',
      url: `/v1/tenants/${graph.tenant}/erasure-requests/${requestId}`,
      token: await app.token(graph.tenant, ['dpo']),
    });
    expect(status.json()).toMatchObject({ state: 'partial', holdIds: [holdId] });
    const certificates = await app.services.certificates.byRequest(graph.tenant, requestId);
    expect(certificates).toHaveLength(1);
    const partial = certificates[0]!;
    expect(partial.status).toBe('partial');
    expect(partial.holds).toHaveLength(1);
    expect(partial.holds[0]!.holdId).toBe(holdId);
    expect(partial.holds[0]!.exemptedCount).toBe(3);
    expect([...partial.holds[0]!.exemptedIds].sort()).toEqual([...held].sort());
    expect(partial.closure.total).toBe(7);
  });

  it('erases the records outside the hold from MongoDB and Elasticsearch', async () => {
    expect(await inMongo(erasedFirst)).toEqual([]);
    const probe = await app.services.index.probe(graph.tenant, {
      ids: erasedFirst.filter((id) => id.startsWith('mem_')),
    });
    expect(probe.byId).toEqual([]);
  });

  it('keeps the held records, readable by the legal role and missing to everyone else', async () => {
    expect((await inMongo(held)).sort()).toEqual([...held].sort());
    const legal = await app.token(graph.tenant, ['legal']);
    const agent = await app.token(graph.tenant, ['agent']);
    const dpo = await app.token(graph.tenant, ['dpo']);
    for (const id of held) {
      const asLegal = await get(kindOf(id), id, legal);
      expect(asLegal.statusCode, id).toBe(200);
      expect(asLegal.json<{ id: string }>().id).toBe(id);
      const missing = await get(kindOf(id), `${id.slice(0, 4)}${'0'.repeat(id.length - 4)}`, agent);
      expect(missing.statusCode).toBe(404);
      for (const token of [agent, dpo]) {
        const refused = await get(kindOf(id), id, token);
        expect(refused.statusCode, id).toBe(404);
        expect(refused.body).toBe(missing.body);
      }
    }
  });

  it('never serves held records through search, not even to their writer', async () => {
    const agent = await app.token(graph.tenant, ['agent'], graph.writer);
    for (const intent of ['current', 'history']) {
      const search = await app.request({
        method: 'POST',
        url: `/v1/tenants/${graph.tenant}/search`,
        token: agent,
        payload: { query: `codeword ${graph.canary} invoices e-mail`, intent },
      });
      expect(search.statusCode, search.body).toBe(200);
      const ids = search.json<{ results: { memory: { id: string } }[] }>().results.map((r) => r.memory.id);
      expect(ids.filter((id) => held.includes(id) || erasedFirst.includes(id))).toEqual([]);
    }
    // The held documents are still in the index: it is the search path that withholds them.
    expect(
      (await app.services.index.probe(graph.tenant, { ids: held.filter((id) => id.startsWith('mem_')) })).byId,
    ).toHaveLength(2);
  });

  it('e-mails the DPO the partial result, naming the request and the partial certificate', async () => {
    const certificateId = (await app.services.certificates.byRequest(graph.tenant, requestId))[0]!.certificateId;
    const mail = await waitForMessage(
      stack.smtp.captureDir,
      (m) => m.subject.includes(requestId) && m.subject.includes('partial'),
    );
    expect(mail.text).toContain(certificateId);
    expect(mail.text).not.toContain(graph.subject);
    expect(mail.text).not.toContain(graph.canary);
  });

  /** Written straight into the stores while the request was partial, as a path around admission would. */
  let derivedBehindAdmission: string;

  it('freezes the held records and the subject while partial: derivations and new records answer 409', async () => {
    const agent = await app.token(graph.tenant, ['agent'], 'agent-late');
    const derivation = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/batches`,
      token: agent,
      payload: {
        memories: [
          sampleMemory({
            subjects: ['segment-late'],
            kind: 'summary',
            content: 'A summary built on a held record.',
            confidence: 0.5,
            provenance: { eventIds: [], parentIds: [held[0]!], derivationRule: 'summarise' },
          }),
        ],
      },
    });
    expect(derivation.statusCode, derivation.body).toBe(409);
    // The agent learns neither which citation is held nor that an erasure runs: the item only.
    expect(derivation.json<{ error: { field: string } }>().error.field).toBe('memories.0');
    const aboutSubject = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/events`,
      token: agent,
      payload: sampleEvent({ subjects: [graph.subject], content: `Another note ${graph.canary}` }),
    });
    expect(aboutSubject.statusCode, aboutSubject.body).toBe(409);
    expect(aboutSubject.body).not.toContain(requestId);
    expect(aboutSubject.body).not.toContain(graph.canary);
    // A caller with erasure rights is told which citation, and the request that holds it.
    const told = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/events`,
      token: await app.token(graph.tenant, ['admin'], 'ops-1'),
      payload: sampleEvent({ subjects: [graph.subject], content: `Another note ${graph.canary}` }),
    });
    expect(told.statusCode, told.body).toBe(409);
    expect(told.body).toContain(requestId);
    expect(told.body).not.toContain(graph.canary);

    // A derivation that reached the stores anyway: the closure after the release starts from the held records.
    const s = app.services;
    const input = MemoryInputSchema.parse(
      sampleMemory({
        subjects: ['segment-late'],
        kind: 'summary',
        content: `Derived behind admission from ${graph.canary}.`,
        confidence: 0.5,
        provenance: { eventIds: [], parentIds: [held[0]!], derivationRule: 'summarise' },
      }),
    );
    const { record } = admittedRecord(
      s.rules,
      { tenant: graph.tenant, writer: 'agent-late', id: `mem_${randomUUID()}`, eventIds: [], at: new Date() },
      input,
      s.tenantMacs,
    );
    await s.lineage.register(graph.tenant, record._id, [held[0]!]);
    await s.memories.insert(record);
    await s.index.upsert(graph.tenant, [record], { refresh: true });
    derivedBehindAdmission = record._id;
  });

  describe('once legal releases the hold', () => {
    beforeAll(async () => {
      const released = await app.request({
        method: 'POST',
        url: `/v1/tenants/${graph.tenant}/legal-holds/${holdId}/release`,
        token: await app.token(graph.tenant, ['legal'], 'counsel-1'),
      });
      expect(released.statusCode, released.body).toBe(200);
      expect(released.json()).toMatchObject({ active: false, releasedBy: 'counsel-1', resumedRequests: 1 });
      const settled = await waitForState(app, graph.tenant, requestId, ['completed', 'needs-operator']);
      expect(settled.state).toBe('completed');
    }, 180_000);

    it('issues a complete certificate chained to the partial one', async () => {
      const [partial, complete] = await app.services.certificates.byRequest(graph.tenant, requestId);
      expect(partial!.status).toBe('partial');
      expect(complete!.status).toBe('complete');
      expect(complete!.seq).toBe(partial!.seq + 1);
      expect(complete!.previousCertificateHash).toBe(partial!.hash);
      expect(complete!.holds).toEqual([]);
      // Counts add up across the two rounds: the collateral the first round swept in stays counted, and each
      // round's purge is a step of its own whose counts sum to what the stores say was deleted.
      // The first round swept in the other subject's contact summary and the segment view; the second adds the
      // segment record derived from a held record while it was held. Each round counts what came before it.
      expect(partial!.closure.collateral).toBe(2);
      expect(complete!.closure.collateral).toBe(3);
      const purges = complete!.steps.filter((s) => s.step === 'purge');
      expect(purges).toHaveLength(2);
      const deleted = (collection: string) =>
        complete!.stores.find((s) => s.store === 'mongodb' && s.collection === collection)!.deleted;
      expect(purges.reduce((n, s) => n + (s.counts.memories ?? 0), 0)).toBe(deleted('memories'));
      expect(purges.reduce((n, s) => n + (s.counts.events ?? 0), 0)).toBe(deleted('events'));
      expect(deleted('memories') + deleted('events')).toBe(complete!.closure.total);
      expect((await app.services.erasureRequests.get(graph.tenant, requestId))!.certificateIds).toEqual([
        partial!.certificateId,
        complete!.certificateId,
      ]);
    });

    it('erases the formerly held records', async () => {
      expect(await inMongo(held)).toEqual([]);
      expect(
        (await app.services.index.probe(graph.tenant, { ids: held.filter((id) => id.startsWith('mem_')) })).byId,
      ).toEqual([]);
      const legal = await app.token(graph.tenant, ['legal']);
      for (const id of held) expect((await get(kindOf(id), id, legal)).statusCode, id).toBe(404);
    });

    it('erases what was derived from the held records while they were held, and certifies it', async () => {
      expect(await inMongo([derivedBehindAdmission])).toEqual([]);
      expect((await app.services.index.probe(graph.tenant, { ids: [derivedBehindAdmission] })).byId).toEqual([]);
      const complete = (await app.services.certificates.byRequest(graph.tenant, requestId))[1]!;
      expect(complete.closure.ids).toContain(derivedBehindAdmission);
    });

    it('e-mails the DPO the completion with the final certificate id', async () => {
      const complete = (await app.services.certificates.byRequest(graph.tenant, requestId))[1]!;
      const mail = await waitForMessage(
        stack.smtp.captureDir,
        (m) => m.subject.includes(requestId) && m.subject.includes('completed'),
      );
      expect(mail.text).toContain(complete.certificateId);
    });
  });
});
