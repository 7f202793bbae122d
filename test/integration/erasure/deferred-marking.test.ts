/**
 * An erasure marks its records deleted without rewriting their rows (the purge removes the rows next): each move is
 * claimed by its transition guard and the request's deletion mark stays open until the purge is done. Between the
 * two steps a record under erasure must read as deleted on every path — the store, the API, the review queue, the
 * contradiction lookup — and every other mover must lose to the erasure's claim. These tests hold the erasure just
 * before its purge and try each path, and race the marking against movers directly on the stores.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { memoryRecord, sampleEvent, sampleMemory } from '../../support/samples.js';
import { stepGate } from '../../support/step-gate.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';

describe('an erasure between its marking and its purge', () => {
  let app: TestApp;
  const holds = new Map<string, { arrived: () => void; release: Promise<void> }>();
  /** Tenants whose erasure loses the closure's facts just before its marking. */
  const forgetFacts = new Set<string>();
  /**
   * How many facts each such erasure had when they were dropped: asserted in the test body (an assertion that
   * failed inside the interceptor would only fail the activity, which Temporal retries).
   */
  const droppedFacts = new Map<string, number>();

  beforeAll(async () => {
    app = await startTestApp({
      activityInterceptors: [
        stepGate(async (activity, input) => {
          if (activity === 'markDeletedAndTombstone' && forgetFacts.has(String(input.tenant))) {
            const facts = await app.services.erasureSets.getFacts(String(input.tenant), String(input.requestId));
            if (!droppedFacts.has(String(input.tenant)))
              droppedFacts.set(String(input.tenant), facts.memories.length + facts.events.length);
            await app.services.erasureSets.dropFacts(String(input.tenant), String(input.requestId));
          }
          const hold = holds.get(String(input.tenant ?? ''));
          if (hold && activity === 'purgeRecords') {
            hold.arrived();
            await hold.release;
          }
        }),
      ],
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Holds the tenant's erasure at the start of its purge; resolves once it is there. */
  function holdBeforePurge(tenant: string) {
    let release!: () => void;
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    holds.set(tenant, { arrived, release: new Promise<void>((resolve) => (release = resolve)) });
    return { reached, release: () => release() };
  }

  const rows = (tenant: string, ids: string[]) =>
    app.runtime.db
      .collection<MemoryRecord>(Collections.memories)
      .find({ tenant, _id: { $in: ids } }, { projection: { _id: 1, status: 1 } })
      .toArray();

  it('serves none of its records anywhere, and lets no other mover take them', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `canary-${randomUUID().slice(0, 8)}`);
    // A high-impact memory about the subject, waiting for sign-off; and a claim about its employer.
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
      payload: {
        events: [
          sampleEvent({
            subjects: [graph.subject],
            namespace: 'hr',
            content: 'HR call: Salary is 61k. Works at Initech.',
          }),
        ],
        memories: [
          sampleMemory({
            subjects: [graph.subject],
            namespace: 'hr',
            kind: 'fact',
            attribute: 'salary',
            content: 'Salary is 61k.',
          }),
          sampleMemory({
            subjects: [graph.subject],
            kind: 'fact',
            attribute: 'employer',
            content: 'Works at Initech.',
          }),
        ],
      },
    });
    expect(written.statusCode, written.body).toBe(201);
    const [candidate, claim] = written.json<{ memories: { id: string; status: string }[] }>().memories;
    expect(candidate!.status).toBe('candidate');
    const erased = [...graph.memories, graph.collateral, candidate!.id, claim!.id];

    const controlIds = graph.control.filter((id) => id.startsWith('mem_'));
    const controlBefore = (await app.services.memories.getMany(tenant, controlIds)).map(
      (m) => `${m._id}:${m.status}:${m.version}`,
    );
    const gate = holdBeforePurge(tenant);
    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    await gate.reached;
    try {
      // The rows still say what they said: the reads below see the marking through the guards alone.
      const before = await rows(tenant, erased);
      expect(before).toHaveLength(erased.length);
      expect(before.filter((r) => r.status === 'deleted')).toEqual([]);

      const read = await app.services.memories.getMany(tenant, erased);
      expect(read.map((m) => [m._id, m.status, m.statusReason])).toEqual(
        erased.map((id) => [id, 'deleted', `erasure:${requestId}`]),
      );
      expect((await app.services.memories.get(tenant, candidate!.id))?.status).toBe('deleted');
      expect((await app.services.memories.listByStatus(tenant, 'candidate', 50)).map((m) => m._id)).toEqual([]);
      expect(
        (await app.services.memories.pageOfTenant(tenant, null, 100))
          .filter((m) => erased.includes(m._id))
          .map((m) => m.status),
      ).toEqual(erased.map(() => 'deleted'));
      const claims = await app.services.claims.bySubjectAttribute(tenant, [graph.subject], 'employer');
      expect(claims.map((c) => [c.id, c.status])).toEqual([[claim!.id, 'deleted']]);

      const agent = await app.token(tenant, ['agent'], 'agent-1');
      for (const id of erased) {
        const response = await app.request({
          method: 'GET',
          url: `/v1/tenants/${tenant}/memories/${id}?intent=history`,
          token: agent,
        });
        expect(response.statusCode, `${id}: ${response.body}`).toBe(404);
      }
      const queue = await app.request({
        method: 'GET',
        url: `/v1/tenants/${tenant}/review-queue`,
        token: await app.token(tenant, ['reviewer'], 'rita'),
      });
      expect(queue.statusCode, queue.body).toBe(200);
      expect(queue.json<{ items: { id: string }[] }>().items.map((i) => i.id)).not.toContain(candidate!.id);

      // Another mover loses the version to the erasure's guard and finishes the erasure's move, not its own.
      expect(await app.services.memories.transition(tenant, claim!.id, 'active', 'disputed', 'contradiction')).toBe(
        false,
      );
      expect(await app.services.memories.transition(tenant, candidate!.id, 'candidate', 'active', 'approved')).toBe(
        false,
      );
      const finished = await rows(tenant, [claim!.id, candidate!.id]);
      expect(finished.map((r) => r.status)).toEqual(['deleted', 'deleted']);
      expect((await app.services.memories.get(tenant, claim!.id))?.status).toBe('deleted');

      // The control set is untouched and reads as it stands.
      const control = await app.services.memories.getMany(tenant, controlIds);
      expect(control.map((m) => `${m._id}:${m.status}:${m.version}`)).toEqual(controlBefore);
    } finally {
      gate.release();
    }

    await waitForState(app, tenant, requestId, ['completed']);
    expect(await rows(tenant, erased)).toEqual([]);
    const open = await app.runtime.db.collection(Collections.deletionMarks).countDocuments({ tenant });
    expect(open).toBe(0);
    const control = await app.services.memories.getMany(tenant, controlIds);
    expect(control.map((m) => `${m._id}:${m.status}:${m.version}`)).toEqual(controlBefore);
  }, 240_000);

  it('marks and tombstones the same whether the closure handed its facts forward or the marking reads them itself', async () => {
    const outcomes = [];
    for (const lose of [false, true]) {
      const tenant = uniqueTenant();
      if (lose) forgetFacts.add(tenant);
      const graph = await buildSubjectGraph(app, tenant, `canary-${randomUUID().slice(0, 8)}`);
      const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
      const request = await waitForState(app, tenant, requestId, ['completed']);
      // The facts were there to lose: the marking really did read the records again itself.
      if (lose) expect(droppedFacts.get(tenant)).toBeGreaterThan(0);
      const marking = request.steps.find((s) => s.step === 'tombstone')!.counts;
      expect(await rows(tenant, [...graph.memories, graph.collateral])).toEqual([]);
      // Nothing the closure read is left behind.
      expect(await app.runtime.db.collection(Collections.erasureFacts).countDocuments({ tenant })).toBe(0);
      // The probes were sampled from the same records (the verification's counts say how many ran, and found nothing).
      const verify = request.steps.find((s) => s.step === 'verify')!.counts;
      outcomes.push({ marking, verify, probes: request.probeResults?.map((p) => p.kind).sort() });
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
    // The subject's 2 events and 4 memories, and the collateral summary: each marked once.
    expect(outcomes[0]!.marking).toMatchObject({ records: 7, marked: 7 });
  }, 240_000);

  it('each record ends in one chain of moves when the marking races other movers', async () => {
    // Rounds of the same race until both outcomes have happened (a mover first, the erasure first); each round
    // checks every record's chain of guards. Under load one side can win every round at a skew of zero, so the
    // later rounds give one side a head start that grows (the markings first, then the movers) until each wins.
    const skews = [0, 0, 10, -10, 50, -50, 200, -200, 1_000, -1_000];
    const outcomes = { moverFirst: 0, erasureFirst: 0 };
    for (const skew of skews) {
      if (outcomes.moverFirst > 0 && outcomes.erasureFirst > 0) break;
      const tally = await raceOnce(skew);
      outcomes.moverFirst += tally.moverFirst;
      outcomes.erasureFirst += tally.erasureFirst;
    }
    expect(outcomes.moverFirst, 'a mover won a version before the erasure').toBeGreaterThan(0);
    expect(outcomes.erasureFirst, 'the erasure won a version before any mover').toBeGreaterThan(0);
  }, 240_000);

  /** One race; a positive skew starts the markings that many ms before the movers, a negative one after. */
  async function raceOnce(skew: number): Promise<{ moverFirst: number; erasureFirst: number }> {
    const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
    const tenant = uniqueTenant();
    const requestId = `er_${randomUUID()}`;
    const records = Array.from({ length: 60 }, (_, i) =>
      memoryRecord(tenant, `mem_${randomUUID()}`, `record ${i}`, { status: i % 3 === 0 ? 'candidate' : 'active' }),
    );
    await app.services.memories.insertMany(records);
    const ids = records.map((r) => r._id);
    // Two markings of the same request (a retried step), a mover per record and a bulk mover (the retention sweep's
    // `transitionMany`) over every third active record, all at once.
    const bulk = records.filter((r, i) => r.status === 'active' && i % 3 === 1);
    const bulkIds = new Set(bulk.map((r) => r._id));
    const moversStart = after(skew);
    const markingsStart = after(-skew);
    const movers = records.map(async (r) => {
      await moversStart;
      return r.status === 'candidate'
        ? app.services.memories.transition(tenant, r._id, 'candidate', 'active', 'approved')
        : bulkIds.has(r._id)
          ? Promise.resolve(false)
          : app.services.memories.transition(tenant, r._id, 'active', 'disputed', 'contradiction');
    });
    const [first, second, swept, ...single] = await Promise.all([
      markingsStart.then(() =>
        app.services.memories.markDeleted(tenant, ids, requestId, records, { rowsAtPurge: true }),
      ),
      markingsStart.then(() => app.services.memories.markDeleted(tenant, ids, requestId, [], { rowsAtPurge: true })),
      moversStart.then(() => app.services.memories.transitionMany(tenant, bulk, 'expired', 'retention')),
      ...movers,
    ]);
    const sweptIds = new Set(swept.moved);
    const moved = records.map((r, i) => (bulkIds.has(r._id) ? sweptIds.has(r._id) : single[i]));
    expect(first + second).toBeGreaterThanOrEqual(ids.length);

    const standing = await app.services.memories.getMany(tenant, ids);
    expect(standing.map((m) => m.status)).toEqual(ids.map(() => 'deleted'));
    const guards = await app.runtime.db
      .collection<{ _id: string; to: string; reason: string | null }>(Collections.transitions)
      .find({ tenant, _id: { $in: ids.map((id) => `${id}:1`).concat(ids.map((id) => `${id}:2`)) } })
      .toArray();
    const byId = new Map(guards.map((g) => [g._id, g]));
    records.forEach((record, i) => {
      const atFirst = byId.get(`${record._id}:1`)!;
      expect(atFirst, record._id).toBeDefined();
      if (moved[i]) {
        // The mover won version 1; the erasure claimed version 2.
        expect(atFirst.to).toBe(
          record.status === 'candidate' ? 'active' : bulkIds.has(record._id) ? 'expired' : 'disputed',
        );
        expect(byId.get(`${record._id}:2`)).toMatchObject({ to: 'deleted', reason: `erasure:${requestId}` });
      } else {
        // The erasure won version 1: no other move exists.
        expect(atFirst).toMatchObject({ to: 'deleted', reason: `erasure:${requestId}` });
        expect(byId.get(`${record._id}:2`)).toBeUndefined();
      }
    });

    await app.services.memories.purge(tenant, ids);
    await app.services.memories.closeDeletionMark(tenant, requestId);
    expect(await app.runtime.db.collection(Collections.deletionMarks).countDocuments({ tenant })).toBe(0);
    const moverFirst = moved.filter(Boolean).length;
    return { moverFirst, erasureFirst: moved.length - moverFirst };
  }
});
