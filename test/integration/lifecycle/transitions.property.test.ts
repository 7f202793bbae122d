/**
 * Property: whatever reviewers and agents do through the API — writes that contradict, sign-offs, adjudications,
 * and attempts at moves the lifecycle forbids — every record's audit trail is a walk through the transition table
 * from its admitted status to its current one, with exactly one entry per move (the record's version counts moves).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { canTransition, type MemoryStatus } from '../../../src/shared/lifecycle.js';
import { disputeWorkflowId, reviewWorkflowId } from '../../../src/shared/workflow-ids.js';

type Op =
  | { op: 'write'; employer: number; highImpact: boolean; writer: number; startYear: number }
  | { op: 'sign-off'; pick: number; approve: boolean }
  | { op: 'adjudicate'; pick: number; outcome: 'keep-one' | 'keep-both' | 'reject-one'; side: number }
  | { op: 'illegal'; pick: number };

const ops = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ op: fc.constant('write' as const), employer: fc.nat(2), highImpact: fc.boolean(), writer: fc.nat(1), startYear: fc.integer({ min: 2020, max: 2024 }) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('sign-off' as const), pick: fc.nat(), approve: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('adjudicate' as const), pick: fc.nat(), outcome: fc.constantFrom('keep-one' as const, 'keep-both' as const, 'reject-one' as const), side: fc.nat(1) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('illegal' as const), pick: fc.nat() }) },
  ),
  { minLength: 3, maxLength: 7 },
);

const EMPLOYERS = ['Acme Corp.', 'Globex Ltd.', 'Initech'];

describe('lifecycle transitions through the API', () => {
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
        payload: {
          events: [sampleEvent({ content: `Note ${Math.random()}` })],
          memories: [
            sampleMemory({
              kind: 'fact',
              attribute: 'employer',
              // The hr namespace makes a write high-impact: it waits in candidate for a sign-off.
              namespace: op.highImpact ? 'hr' : 'support',
              content: `Works at ${EMPLOYERS[op.employer]}`,
              validFrom: `${op.startYear}-01-01T00:00:00Z`,
            }),
          ],
        },
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
        (['active', 'disputed', 'superseded', 'rejected'] as const).map((s) => app.services.memories.listByStatus(tenant, s, 100)),
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
      expect(response.statusCode).toBe(404);
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
      else if (details.from && details.to) moves.set(entry.target, [...(moves.get(entry.target) ?? []), [details.from, details.to]]);
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
