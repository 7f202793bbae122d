/**
 * After a completed erasure, every MongoDB collection and every Elasticsearch index of the tenant is read in
 * full and searched for the subject's identifier and for a canary that appeared only in its content, in
 * reviewers' and legal's words about it, and in a stage an ingest left behind. Nothing may be found: the
 * places the certificate lists at L3 (write-ahead log, backups, Temporal history) are outside these stores,
 * and the certificate, audit log and request keep record ids and keyed hashes only.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState, type SubjectGraph } from '../../support/erasure-fixture.js';
import { leaveStage } from '../../support/side-records-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

/**
 * Collections that may name an erased record by its (random, content-free) id: what proves the erasure (the
 * certificate, the audit chain, the transition guards), and disputes, which keep their sides' ids and close as
 * `void` when one side is erased.
 */
const MAY_NAME_ERASED_IDS = new Set<string>([
  Collections.certificates,
  Collections.audit,
  Collections.transitions,
  Collections.disputes,
]);

describe('a whole-store scan after an erasure', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let requestId: string;
  let erasedIds: string[];
  const tenant = uniqueTenant();

  async function call(
    method: 'POST' | 'GET',
    url: string,
    roles: ('agent' | 'reviewer' | 'legal' | 'dpo')[],
    payload?: object,
    principal?: string,
  ) {
    return app.request({
      method,
      url: `/v1/tenants/${tenant}${url}`,
      token: await app.token(tenant, roles, principal),
      ...(payload ? { payload } : {}),
    });
  }

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, tenant, `CANARY-${randomUUID()}`);
    const { subject, canary } = graph;

    // A high-impact write about the subject, signed off with a reason that quotes it.
    const hr = await call('POST', '/batches', ['agent'], {
      events: [sampleEvent({ namespace: 'hr', subjects: [subject], content: `Payslip ${canary}.` })],
      memories: [
        sampleMemory({
          namespace: 'hr',
          subjects: [subject],
          attribute: 'salary',
          content: `Salary of ${canary} is 52k.`,
        }),
      ],
    });
    expect(hr.statusCode, hr.body).toBe(201);
    const candidate = hr.json<{ memories: { id: string }[] }>().memories[0]!.id;
    const decided = await call(
      'POST',
      `/review-queue/${candidate}/decision`,
      ['reviewer'],
      { decision: 'approve', reason: `Payslip of ${canary} checked.` },
      'rita',
    );
    expect(decided.statusCode, decided.body).toBe(200);

    // Two writes that disagree about the subject, resolved with a reason that quotes it.
    const sides: string[] = [];
    for (const [writer, employer] of [
      ['agent-1', 'Acme'],
      ['agent-2', 'Globex'],
    ] as const) {
      const written = await call(
        'POST',
        '/batches',
        ['agent'],
        {
          events: [sampleEvent({ subjects: [subject], content: `Call note: ${canary} works at ${employer}.` })],
          memories: [
            sampleMemory({ subjects: [subject], attribute: 'employer', content: `${canary} works at ${employer}.` }),
          ],
        },
        writer,
      );
      expect(written.statusCode, written.body).toBe(201);
      sides.push(written.json<{ memories: { id: string }[] }>().memories[0]!.id);
    }
    const [dispute] = await app.services.disputes.openFor(tenant, sides[0]!);
    expect(dispute, 'the two writes are disputed').toBeDefined();
    const resolved = await call(
      'POST',
      `/disputes/${dispute!._id}/resolution`,
      ['reviewer'],
      { outcome: 'keep-one', memoryId: sides[1], reason: `HR confirmed ${canary} moved.` },
      'rita',
    );
    expect(resolved.statusCode, resolved.body).toBe(200);

    // A hold on the subject, placed and released before the erasure.
    const hold = await call(
      'POST',
      '/legal-holds',
      ['legal'],
      { scope: { subjectId: subject }, caseRef: 'case-2026-031' },
      'counsel-1',
    );
    expect(hold.statusCode, hold.body).toBe(201);
    const released = await call(
      'POST',
      `/legal-holds/${hold.json<{ id: string }>().id}/release`,
      ['legal'],
      undefined,
      'counsel-1',
    );
    expect(released.statusCode, released.body).toBe(200);

    // A stage an ingest left behind (the API stopped between staging and starting the write).
    await leaveStage(app, tenant, {
      events: [sampleEvent({ subjects: [subject], content: `Left behind: ${canary}.` })],
    });

    const before = await app.services.memories.idsBySubject(tenant, subject);
    requestId = await fileErasure(app, tenant, { subjectId: subject });
    const done = await waitForState(
      app,
      tenant,
      requestId,
      ['completed', 'partial', 'needs-operator', 'rejected'],
      180_000,
    );
    expect(done.state, done.operatorNote ?? '').toBe('completed');
    const certificate = (await app.services.certificates.byRequest(tenant, requestId)).at(-1)!;
    erasedIds = certificate.closure.ids;
    expect(erasedIds).toEqual(expect.arrayContaining(before));
  }, 300_000);
  afterAll(async () => {
    await app?.close();
  });

  it('finds neither the subject nor the canary in any MongoDB collection', async () => {
    const found: string[] = [];
    const collections = await app.runtime.db.listCollections({}, { nameOnly: true }).toArray();
    expect(collections.length).toBeGreaterThanOrEqual(10);
    for (const { name } of collections) {
      // Every document of the tenant, and every document that names no tenant at all.
      const docs = await app.runtime.db
        .collection(name)
        .find({ $or: [{ tenant }, { tenant: { $exists: false } }] })
        .toArray();
      for (const doc of docs) {
        const text = JSON.stringify(doc);
        if (text.includes(graph.canary)) found.push(`${name} ${String(doc._id)}: canary`);
        if (text.includes(graph.subject)) found.push(`${name} ${String(doc._id)}: subject`);
        if (!MAY_NAME_ERASED_IDS.has(name)) {
          const named = erasedIds.filter((id) => text.includes(id));
          if (named.length > 0) found.push(`${name} ${String(doc._id)}: ${named.length} erased ids`);
        }
      }
    }
    expect(found).toEqual([]);
  });

  it("finds neither in the tenant's Elasticsearch index, read in full", async () => {
    const index = await app.services.index.indexOf(tenant);
    expect(index, 'the tenant has an index').not.toBeNull();
    const hits = await app.runtime.es.search<Record<string, unknown>>({
      index: index!,
      size: 1000,
      query: { match_all: {} },
    });
    const docs = hits.hits.hits;
    // The other subject's records are still there: the read is real.
    expect(docs.length).toBeGreaterThan(0);
    const found = docs
      .map((h) => ({ id: h._id, text: JSON.stringify(h._source) }))
      .filter(
        (d) => d.text.includes(graph.canary) || d.text.includes(graph.subject) || erasedIds.includes(String(d.id)),
      );
    expect(found.map((d) => d.id)).toEqual([]);
  });
});
