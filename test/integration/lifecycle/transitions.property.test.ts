/**
 * The memory lifecycle's transition table, and every move it forbids.
 *
 * - Over the pure table (fast-check, hundreds of cases): it allows exactly the moves of the specification written
 *   out below, and any walk of attempted moves keeps the lifecycle's shape.
 * - On the real stack, every forbidden (from, to) pair is attempted once, through the request or process that moves
 *   records to `to` (a sign-off, an adjudication, a contradicting write, a retention sweep, an erasure), against a
 *   record placed in `from`, and is refused. Enumerated rather than sampled: a random case through the API costs
 *   about 4 s, so 100 of them would take minutes of the suite's budget and still miss pairs.
 * - Every move the memory store makes is claimed in its transition log (one guard per record version, naming from
 *   and to): each real-stack test ends by finding no forbidden move in its tenant's log. That also covers the two
 *   targets no request or process ever asks for: `candidate` (records are admitted there, never moved back) and
 *   `purged` (the purge removes a record physically, after the erasure has moved it to `deleted`).
 * - Besides, random walks through the API (writes that contradict, sign-offs, adjudications, sign-offs of records
 *   not waiting for one) leave every record's audit trail a walk through the table, one entry per move.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory, statedBatch } from '../../support/samples.js';
import { MEMORY_STATUSES, canTransition, nextStatuses, type MemoryStatus } from '../../../src/shared/lifecycle.js';
import { disputeWorkflowId, reviewWorkflowId } from '../../../src/shared/workflow-ids.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';
import { expiryBucketOf } from '../../../src/governance/retention/expiry-bucket.js';
import type { RetentionSweepResult } from '../../../src/temporal/contracts/retention-sweep.contract.js';
import type { RetentionSweepInput } from '../../../src/temporal/contracts/retention-sweep.contract.js';

/** The lifecycle's legal moves, written out independently of the table in `src/shared/lifecycle.ts`. */
const SPECIFICATION: Readonly<Record<MemoryStatus, readonly MemoryStatus[]>> = {
  candidate: ['active', 'rejected', 'deleted'],
  active: ['disputed', 'superseded', 'expired', 'deleted'],
  disputed: ['active', 'superseded', 'rejected', 'deleted'],
  superseded: ['deleted'],
  expired: ['deleted'],
  rejected: ['deleted'],
  deleted: ['purged'],
  purged: [],
};

const ALL_PAIRS = MEMORY_STATUSES.flatMap((from) =>
  MEMORY_STATUSES.map((to) => [from, to] as [MemoryStatus, MemoryStatus]),
);
const FORBIDDEN = ALL_PAIRS.filter(([from, to]) => !SPECIFICATION[from].includes(to));
/** The statuses from which a move to `to` is forbidden. */
const forbiddenInto = (to: MemoryStatus) => FORBIDDEN.filter(([, t]) => t === to).map(([from]) => from);
const status = fc.constantFrom(...MEMORY_STATUSES);

describe('the transition table (pure)', () => {
  it('allows a move exactly when the lifecycle specification lists it, and forbids the other 49', () => {
    expect(FORBIDDEN).toHaveLength(49);
    fc.assert(
      fc.property(status, status, (from, to) => {
        const allowed = SPECIFICATION[from].includes(to);
        expect(canTransition(from, to), `${from} → ${to}`).toBe(allowed);
        expect(nextStatuses(from).includes(to), `${from} → ${to}`).toBe(allowed);
      }),
      // Every pair once, then random ones.
      { numRuns: 200, examples: ALL_PAIRS },
    );
  });

  it('keeps any walk of attempted moves in shape: no way back but active ⇄ disputed, erasure always one move away, purged is the end', () => {
    const reachesPurged = (from: MemoryStatus): boolean => {
      const seen = new Set<MemoryStatus>([from]);
      for (const at of seen) for (const next of nextStatuses(at)) seen.add(next);
      return seen.has('purged');
    };
    fc.assert(
      fc.property(
        fc.constantFrom<MemoryStatus>('candidate', 'active'),
        fc.array(status, { maxLength: 25 }),
        (admitted, attempts) => {
          let at = admitted;
          const visited: MemoryStatus[] = [at];
          for (const to of attempts) {
            const before = at;
            if (canTransition(at, to)) at = to;
            else continue;
            expect(to, 'a move goes somewhere else').not.toBe(before);
            // The one cycle: a dispute resolved keeping both sides returns the record to active, and it may be disputed again.
            const disputeCycle =
              (before === 'active' && to === 'disputed') || (before === 'disputed' && to === 'active');
            if (!disputeCycle)
              expect(visited.includes(to), `${before} → ${to} returns to a status the record has left`).toBe(false);
            expect(before === 'deleted' ? to === 'purged' : true, 'after deleted, only purged').toBe(true);
            visited.push(to);
          }
          for (const reached of visited) {
            // The erasure marks any live record deleted in one move, and every record can end purged.
            if (reached !== 'deleted' && reached !== 'purged')
              expect(canTransition(reached, 'deleted'), reached).toBe(true);
            expect(reachesPurged(reached), reached).toBe(true);
            expect(reached === 'candidate' ? visited[0] === 'candidate' : true, 'candidate only as admitted').toBe(
              true,
            );
          }
          if (at === 'purged') expect(nextStatuses(at)).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });
});

type Op =
  | { op: 'write'; employer: number; highImpact: boolean; writer: number; startYear: number }
  | { op: 'sign-off'; pick: number; approve: boolean }
  | { op: 'adjudicate'; pick: number; outcome: 'keep-one' | 'keep-both' | 'reject-one'; side: number }
  | { op: 'illegal'; pick: number };

const ops = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('write' as const),
        employer: fc.nat(2),
        highImpact: fc.boolean(),
        writer: fc.nat(1),
        startYear: fc.integer({ min: 2020, max: 2024 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ op: fc.constant('sign-off' as const), pick: fc.nat(), approve: fc.boolean() }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('adjudicate' as const),
        pick: fc.nat(),
        outcome: fc.constantFrom('keep-one' as const, 'keep-both' as const, 'reject-one' as const),
        side: fc.nat(1),
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('illegal' as const), pick: fc.nat() }) },
  ),
  { minLength: 3, maxLength: 7 },
);

const EMPLOYERS = ['Acme Corp.', 'Globex Ltd.', 'Initech'];

describe('every forbidden move, attempted through the API and the workflows', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const memoriesCollection = () => app.runtime.db.collection<MemoryRecord>(Collections.memories);

  /** Puts a record in `status` (a purged record is one no longer stored): the state the attempt starts from. */
  async function place(id: string, placed: MemoryStatus): Promise<void> {
    if (placed === 'purged') await memoriesCollection().deleteOne({ _id: id });
    else await memoriesCollection().updateOne({ _id: id }, { $set: { status: placed } });
  }

  /** A record's status and version, or `gone`: what a refused move leaves as it was. */
  async function stateOf(tenant: string, id: string): Promise<string> {
    const record = await app.services.memories.get(tenant, id);
    return record ? `${record.status}@v${record.version}` : 'gone';
  }

  /** The moves the memory store claimed in the tenant (its transition log), and those of them the table forbids. */
  async function claimedMoves(tenant: string): Promise<{ all: string[]; forbidden: string[] }> {
    const guards = await app.runtime.db
      .collection<{ _id: string; tenant: string; from: MemoryStatus; to: MemoryStatus }>(Collections.transitions)
      .find({ tenant })
      .toArray();
    const all = guards.map((g) => `${g._id.split(':')[0]} ${g.from} → ${g.to}`);
    return {
      all,
      forbidden: guards.filter((g) => !SPECIFICATION[g.from].includes(g.to)).map((g) => `${g._id} ${g.from} → ${g.to}`),
    };
  }

  async function write(tenant: string, writer: string, body: { events?: object[]; memories: object[] }) {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], writer),
      // Each memory cites an event that states it: the derivation audit admits them as written.
      payload: statedBatch(
        body.memories as Record<string, unknown>[],
        (body.events ?? []) as Record<string, unknown>[],
      ),
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ memories: { id: string; status: string }[] }>().memories;
  }

  /** A fact about a subject's employer, from the batch's first event. */
  const employerFact = (subject: string, employer: string, namespace = 'support') =>
    sampleMemory({
      subjects: [subject],
      kind: 'fact',
      attribute: 'employer',
      namespace,
      content: `Works at ${employer}`,
    });

  it('refuses a sign-off of a record not waiting for one: every forbidden move to active or rejected', async () => {
    const tenant = uniqueTenant();
    const reviewer = await app.token(tenant, ['reviewer'], 'rita');
    const pairs = (['active', 'rejected'] as const).flatMap((to) => forbiddenInto(to).map((from) => ({ from, to })));
    const froms = [...new Set(pairs.map((p) => p.from))];
    // One record per starting status, and a high-impact write (hr) that does wait for a sign-off.
    const written = await write(tenant, 'agent-1', {
      memories: [
        ...froms.map((from) => employerFact(`subject-${from}`, 'Acme Corp.')),
        employerFact('subject-waiting', 'Initech', 'hr'),
      ],
    });
    const recordIn = new Map(froms.map((from, i) => [from, written[i]!.id]));
    const waiting = written[froms.length]!;
    expect(waiting.status).toBe('candidate');
    for (const [from, id] of recordIn) await place(id, from);

    for (const { from, to } of pairs) {
      const id = recordIn.get(from)!;
      const before = await stateOf(tenant, id);
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/review-queue/${id}/decision`,
        token: reviewer,
        payload: { decision: to === 'active' ? 'approve' : 'reject', reason: 'trying my luck' },
      });
      expect(response.statusCode, `${from} → ${to}: ${response.body}`).toBe(404);
      expect(await stateOf(tenant, id), `${from} → ${to}`).toBe(before);
    }

    // The same request moves a record that does wait for a sign-off: the refusals above are the table's.
    const approved = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/review-queue/${waiting.id}/decision`,
      token: reviewer,
      payload: { decision: 'approve', reason: 'checked against the HR system' },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    await app.services.temporalClient.workflow.getHandle(reviewWorkflowId(tenant, waiting.id)).result();
    expect(await stateOf(tenant, waiting.id)).toBe('active@v2');
    const moves = await claimedMoves(tenant);
    expect(moves.all).toEqual([`${waiting.id} candidate → active`]);
    expect(moves.forbidden).toEqual([]);
  });

  it('refuses, in a keep-one adjudication, to supersede a record that is no longer disputed', async () => {
    const tenant = uniqueTenant();
    const froms = forbiddenInto('superseded');
    // Two facts that contradict each other per starting status: one dispute each.
    const written = await write(tenant, 'agent-1', {
      memories: froms.flatMap((from) => [
        employerFact(`subject-${from}`, 'Acme Corp.'),
        employerFact(`subject-${from}`, 'Globex Ltd.'),
      ]),
    });
    expect(written.map((m) => m.status)).toEqual(written.map(() => 'disputed'));
    const open = await app.services.disputes.listOpen(tenant, 100);
    expect(open).toHaveLength(froms.length);
    const reviewer = await app.token(tenant, ['reviewer'], 'rita');

    for (const [i, from] of froms.entries()) {
      const [kept, loser] = [written[2 * i]!.id, written[2 * i + 1]!.id];
      const dispute = open.find((d) => d.memoryIds.includes(kept))!;
      expect(dispute.memoryIds).toContain(loser);
      await place(loser, from);
      const before = await stateOf(tenant, loser);
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/disputes/${dispute._id}/resolution`,
        token: reviewer,
        payload: { outcome: 'keep-one', memoryId: kept, reason: 'decided on the evidence' },
      });
      if (from === 'deleted' || from === 'purged') {
        // An erased side: the erasure wins and no decision is made; the other side stays as it was.
        expect(response.statusCode, `${from} → superseded: ${response.body}`).toBe(409);
        expect(await stateOf(tenant, loser), `${from} → superseded`).toBe(before);
        expect((await app.services.memories.get(tenant, kept))?.status).toBe('disputed');
        continue;
      }
      expect(response.statusCode, `${from} → superseded: ${response.body}`).toBe(200);
      await app.services.temporalClient.workflow.getHandle(disputeWorkflowId(tenant, dispute._id)).result();
      expect(await stateOf(tenant, loser), `${from} → superseded`).toBe(before);
      // The kept side, still disputed, does move: the adjudication ran and applied what the table allows.
      expect((await app.services.memories.get(tenant, kept))?.status).toBe('active');
    }
    const moves = await claimedMoves(tenant);
    expect(moves.all.filter((m) => m.endsWith('superseded'))).toEqual([]);
    expect(moves.forbidden).toEqual([]);
  });

  it('does not dispute, on a contradicting write, a record that is not active', async () => {
    const tenant = uniqueTenant();
    const froms = forbiddenInto('disputed');
    // One fact per starting status, and one left active: the control that a contradiction does dispute.
    const subjects = [...froms, 'active' as const].map((from) => `subject-${from}`);
    const held = await write(tenant, 'agent-1', {
      memories: subjects.map((subject) => employerFact(subject, 'Acme Corp.')),
    });
    for (const [i, from] of froms.entries()) await place(held[i]!.id, from);
    const before = await Promise.all(held.map((m) => stateOf(tenant, m.id)));

    const contradicting = await write(tenant, 'agent-2', {
      memories: subjects.map((subject) => employerFact(subject, 'Globex Ltd.')),
    });
    expect(contradicting).toHaveLength(subjects.length);
    for (const [i, from] of froms.entries()) {
      expect(await stateOf(tenant, held[i]!.id), `${from} → disputed`).toBe(before[i]);
    }
    const control = held[froms.length]!.id;
    expect(await stateOf(tenant, control)).toBe('disputed@v2');
    const moves = await claimedMoves(tenant);
    expect(moves.all).toContain(`${control} active → disputed`);
    expect(moves.forbidden).toEqual([]);
  });

  it('does not expire, in a retention sweep, a record past its retention that is not active', async () => {
    const tenant = uniqueTenant();
    const froms = forbiddenInto('expired');
    const subjects = [...froms, 'active' as const].map((from) => `subject-${from}`);
    const written = await write(tenant, 'agent-1', {
      memories: subjects.map((subject, i) =>
        sampleMemory({ subjects: [subject], attribute: `a${i}`, content: `Preference ${i}` }),
      ),
    });
    const past = new Date(Date.now() - 3 * 3600_000);
    for (const m of written) {
      await memoriesCollection().updateOne(
        { _id: m.id },
        { $set: { expiresAt: past, expiryBucket: expiryBucketOf(past) } },
      );
    }
    for (const [i, from] of froms.entries()) await place(written[i]!.id, from);
    const before = await Promise.all(written.map((m) => stateOf(tenant, m.id)));

    // No erasure is let to start (none may be open, and no time is given to wait): the sweep only marks.
    const input: RetentionSweepInput = { tenant, maxOpenErasures: 0, handOffMinutes: 0 };
    const result = (await app.worker.client.workflow.execute('retentionSweep', {
      taskQueue: app.worker.taskQueue,
      workflowId: `retention-transitions-${tenant}`,
      args: [input],
    })) as RetentionSweepResult;
    expect(result).toMatchObject({ expired: 1, erasures: 0 });

    for (const [i, from] of froms.entries())
      expect(await stateOf(tenant, written[i]!.id), `${from} → expired`).toBe(before[i]);
    const control = written[froms.length]!.id;
    expect(await stateOf(tenant, control)).toBe('expired@v2');
    const moves = await claimedMoves(tenant);
    expect(moves.all).toEqual([`${control} active → expired`]);
    expect(moves.forbidden).toEqual([]);
  });

  it('erases a record straight to deleted from any live status, never one already deleted or gone, and marks none purged', async () => {
    const tenant = uniqueTenant();
    const subject = 'subject-erased';
    const refused = forbiddenInto('deleted');
    const live = MEMORY_STATUSES.filter((s) => SPECIFICATION[s].includes('deleted'));
    const froms = [...refused, ...live];
    const written = await write(tenant, 'agent-1', {
      events: [sampleEvent({ subjects: [subject], content: `Call note ${randomUUID()}` })],
      memories: froms.map((_, i) =>
        sampleMemory({ subjects: [subject], attribute: `a${i}`, content: `Preference ${i}` }),
      ),
    });
    const recordIn = new Map(froms.map((from, i) => [from, written[i]!.id]));
    for (const [from, id] of recordIn) await place(id, from);

    const requestId = await fileErasure(app, tenant, { subjectId: subject });
    const done = await waitForState(app, tenant, requestId, ['completed', 'partial', 'needs-operator', 'rejected']);
    expect(done.state, done.operatorNote ?? '').toBe('completed');

    const moves = await claimedMoves(tenant);
    // One claimed move per live record, straight to deleted; none for a record already deleted or gone.
    expect(moves.all.sort()).toEqual(live.map((from) => `${recordIn.get(from)} ${from} → deleted`).sort());
    for (const from of refused)
      expect(
        moves.all.filter((m) => m.startsWith(`${recordIn.get(from)} `)),
        from,
      ).toEqual([]);
    expect(moves.forbidden).toEqual([]);
    for (const id of recordIn.values()) expect(await stateOf(tenant, id)).toBe('gone');
  });
});

describe('random walks through the API', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  async function run(tenant: string, op: Op): Promise<void> {
    const reviewer = await app.token(tenant, ['reviewer'], 'rita');
    if (op.op === 'write') {
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: await app.token(tenant, ['agent'], `agent-${op.writer}`),
        payload: statedBatch([
          sampleMemory({
            kind: 'fact',
            attribute: 'employer',
            // The hr namespace makes a write high-impact: it waits in candidate for a sign-off.
            namespace: op.highImpact ? 'hr' : 'support',
            content: `Works at ${EMPLOYERS[op.employer]}`,
            validFrom: `${op.startYear}-01-01T00:00:00Z`,
          }),
        ]),
      });
      expect(response.statusCode, response.body).toBe(201);
    } else if (op.op === 'sign-off') {
      const candidates = await app.services.memories.listByStatus(tenant, 'candidate', 100);
      const target = candidates[op.pick % Math.max(1, candidates.length)];
      if (!target) return;
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/review-queue/${target._id}/decision`,
        token: reviewer,
        payload: { decision: op.approve ? 'approve' : 'reject', reason: 'checked against the HR system' },
      });
      expect(response.statusCode, response.body).toBe(200);
      // The sign-off workflow goes on to compare an approved write with what is held: wait for it to finish.
      await app.services.temporalClient.workflow.getHandle(reviewWorkflowId(tenant, target._id)).result();
    } else if (op.op === 'adjudicate') {
      const open = await app.services.disputes.listOpen(tenant, 100);
      const dispute = open[op.pick % Math.max(1, open.length)];
      if (!dispute) return;
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/disputes/${dispute._id}/resolution`,
        token: reviewer,
        payload: {
          outcome: op.outcome,
          ...(op.outcome === 'keep-both' ? {} : { memoryId: dispute.memoryIds[op.side] }),
          reason: 'decided on the evidence',
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      await app.services.temporalClient.workflow.getHandle(disputeWorkflowId(tenant, dispute._id)).result();
    } else {
      // A sign-off for a record that is not a candidate: refused, and nothing moves.
      const all = await Promise.all(
        (['active', 'disputed', 'superseded', 'rejected'] as const).map((s) =>
          app.services.memories.listByStatus(tenant, s, 100),
        ),
      );
      const records = all.flat();
      const target = records[op.pick % Math.max(1, records.length)];
      if (!target) return;
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/review-queue/${target._id}/decision`,
        token: reviewer,
        payload: { decision: 'approve', reason: 'trying my luck' },
      });
      // A record a reviewer already decided on: 409 (decided); one that never waited for a sign-off: 404.
      expect(response.statusCode, response.body).toBe(target.statusReason?.startsWith('review:') ? 409 : 404);
      expect((await app.services.memories.get(tenant, target._id))?.version).toBe(target.version);
    }
  }

  /** Each record's audited moves form a legal walk from its admitted status to its current one, one per version. */
  async function checkTrails(tenant: string): Promise<{ records: number; moves: number }> {
    const admitted = new Map<string, MemoryStatus>();
    const moves = new Map<string, [MemoryStatus, MemoryStatus][]>();
    for await (const entry of app.services.audit.entries(tenant)) {
      const details = (entry.details ?? {}) as { status?: MemoryStatus; from?: MemoryStatus; to?: MemoryStatus };
      if (!entry.target?.startsWith('mem_')) continue;
      if (entry.action === 'memory.created' && details.status) admitted.set(entry.target, details.status);
      else if (details.from && details.to)
        moves.set(entry.target, [...(moves.get(entry.target) ?? []), [details.from, details.to]]);
    }
    let checked = 0;
    let moved = 0;
    for (const [id, first] of admitted) {
      const record = await app.services.memories.get(tenant, id);
      const trail = moves.get(id) ?? [];
      let at = first;
      for (const [from, to] of trail) {
        expect(from, `${id}: audited move starts where the last one ended`).toBe(at);
        expect(canTransition(from, to), `${id}: ${from} → ${to} is in the table`).toBe(true);
        at = to;
      }
      expect(at, `${id}: the trail ends at the record's status`).toBe(record?.status);
      expect(trail.length, `${id}: one audit entry per move`).toBe(record!.version - 1);
      checked++;
      moved += trail.length;
    }
    return { records: checked, moves: moved };
  }

  it('never reaches an illegal status, and audits each legal move exactly once', async () => {
    let records = 0;
    let moved = 0;
    await fc.assert(
      fc.asyncProperty(ops, async (sequence) => {
        const tenant = uniqueTenant();
        for (const op of sequence) await run(tenant, op);
        const trails = await checkTrails(tenant);
        const claimed = (
          await app.runtime.db
            .collection<{ tenant: string; from: MemoryStatus; to: MemoryStatus }>(Collections.transitions)
            .find({ tenant })
            .toArray()
        ).filter((g) => !canTransition(g.from, g.to));
        expect(claimed, "no forbidden move in the memory store's transition log").toEqual([]);
        records += trails.records;
        moved += trails.moves;
      }),
      {
        numRuns: 4,
        endOnFailure: true,
        // One walk always taken: a contradiction, a high-impact write signed off into it, and an adjudication.
        examples: [
          [
            [
              { op: 'write', employer: 0, highImpact: false, writer: 0, startYear: 2020 },
              { op: 'write', employer: 1, highImpact: false, writer: 1, startYear: 2022 },
              { op: 'write', employer: 2, highImpact: true, writer: 0, startYear: 2023 },
              { op: 'sign-off', pick: 0, approve: true },
              { op: 'adjudicate', pick: 0, outcome: 'keep-one', side: 0 },
              { op: 'illegal', pick: 1 },
            ],
          ],
        ],
      },
    );
    expect(records).toBeGreaterThan(0);
    expect(moved).toBeGreaterThan(0);
  });
});
