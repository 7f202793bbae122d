import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../../app/services.js';
import type { Runtime } from '../../../app/runtime.js';
import { reviewPlan, type ReviewPlan } from '../../../src/governance/review/review-plan.js';
import { toApiError } from '../../../app/api/workflow-errors.js';
import { DomainError } from '../../../src/shared/errors.js';
import type { MemoryReviewInput, ReviewOutcome } from '../../../src/temporal/contracts/memory-review.contract.js';
import { startWorker, testRuntime, uniqueId, type RunningWorker } from '../../support/harness.js';
import { insertReviewCandidate } from '../../support/review-candidate.js';
import { stepGate } from '../../support/step-gate.js';

/**
 * A reviewer's decision against the review's final deadline, in real time on the dev server: the plan's deadlines
 * are seconds long. Which side a decision lands on is set by an event, not by the clock: a decision well before a
 * deadline minutes away, one while the deadline's default is held at its store step, one after the default decided.
 */
describe('a reviewer’s decision and the final deadline', () => {
  let runtime: Runtime;
  let services: Services;
  let worker: RunningWorker;
  const slowMiss = new Map<string, number>();
  /** Tenants whose deadline default is held at the start of its store step until released. */
  const heldDefaults = new Map<string, { reached: () => void; released: Promise<void>; release: () => void }>();

  /** Holds the tenant's deadline default at the start of its store step: `reached` once it is there. */
  function holdDefault(tenant: string): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const atStep = new Promise<void>((resolve) => (reached = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    heldDefaults.set(tenant, { reached, released, release });
    return { reached: atStep, release };
  }

  beforeAll(async () => {
    runtime = testRuntime();
    services = createServices(runtime);
    // A record in `slowMiss` is read once by the worker as a slow miss (the store answers late, and without it).
    const read = services.memories.get;
    const memories = {
      ...services.memories,
      async get(tenant: string, id: string) {
        const delay = slowMiss.get(id);
        if (delay === undefined) return read(tenant, id);
        slowMiss.delete(id);
        await new Promise((resolve) => setTimeout(resolve, delay));
        return null;
      },
    };
    const gate = stepGate(async (activity, input) => {
      const held = heldDefaults.get(input['tenant'] as string);
      if (activity !== 'applyReviewDecision' || input['byDefault'] !== true || !held) return;
      held.reached();
      await held.released;
    });
    worker = await startWorker(runtime, uniqueId('review-tq'), { ...services, memories }, [gate]);
  });
  afterAll(async () => {
    for (const held of heldDefaults.values()) held.release();
    await worker?.stop();
    await runtime?.close();
  });

  /** The confidential plan with its deadlines shortened to `finalMs` (reminder and escalation before it). */
  function plan(finalMs: number): ReviewPlan {
    const days = reviewPlan(services.rules.reviewSla, services.rules.reviewTimeout, 'confidential');
    expect(days.defaultDecision).toBe('reject');
    return { ...days, reminderMs: Math.floor(finalMs / 4), escalationMs: Math.floor(finalMs / 2), finalMs };
  }

  async function startReview(finalMs: number, tenant = uniqueId('t')) {
    const record = await insertReviewCandidate(services, tenant);
    const input: MemoryReviewInput = { tenant, memoryId: record._id, writtenBy: 'agent-1', plan: plan(finalMs) };
    const handle = await worker.client.workflow.start('memoryReview', {
      taskQueue: worker.taskQueue,
      workflowId: uniqueId('review'),
      args: [input],
    });
    // The workflow has run its first task: the deadlines' timers are set.
    await handle.query('reviewState');
    return { tenant, record, handle };
  }

  const decide = (handle: Awaited<ReturnType<typeof startReview>>['handle'], reviewer: string, decision: string) =>
    handle.executeUpdate<ReviewOutcome, [unknown]>('decideReview', { args: [{ reviewer, decision, reasonHash: 'h' }] });

  it('answers a reviewer’s decision at once, and refuses the writer deciding on their own write', async () => {
    const { tenant, record, handle } = await startReview(60_000);
    const self = await decide(handle, 'agent-1', 'approve').catch((error: { cause?: Error }) => error.cause?.message);
    expect(self).toMatch(/may not decide on a write they made/);
    const answer = await decide(handle, 'rita', 'approve');
    expect(answer).toMatchObject({ status: 'active', decidedBy: 'rita', byDefault: false });
    expect(await handle.result()).toMatchObject({ status: 'active' });
    expect((await services.memories.get(tenant, record._id))?.status).toBe('active');
  });

  it('lets either the reviewer or the deadline’s default decide, never both, and tells a losing reviewer it was the default', async () => {
    const seen = new Set<'reviewer' | 'default'>();
    // The reviewer's Update lands well before a deadline minutes away; while the default, having claimed the item at
    // its deadline, is held at its store step; and after the default has decided.
    const rounds = [
      { at: 'before-deadline', finalMs: 10 * 60_000, must: 'reviewer' },
      { at: 'while-default-applies', finalMs: 1_000, must: 'default' },
      { at: 'after-default', finalMs: 1_000, must: 'default' },
    ] as const;
    for (const { at, finalMs, must } of rounds) {
      const tenant = uniqueId('t');
      const held = at === 'while-default-applies' ? holdDefault(tenant) : null;
      const { record, handle } = await startReview(finalMs, tenant);
      if (held) await held.reached;
      if (at === 'after-default') {
        // Bounded by the test's timeout.
        while ((await handle.query<{ state: string }>('reviewState')).state !== 'decided')
          await new Promise((r) => setTimeout(r, 50));
      }
      const [decided] = await Promise.allSettled([decide(handle, 'rita', 'reject')]);
      held?.release();
      const outcome = (await handle.result()) as ReviewOutcome;
      const winner = decided.status === 'fulfilled' ? 'reviewer' : 'default';
      expect(winner, at).toBe(must);
      seen.add(winner);
      if (decided.status === 'fulfilled') {
        expect(outcome).toMatchObject({ decidedBy: 'rita', byDefault: false });
      } else {
        expect(outcome).toMatchObject({ byDefault: true, decidedBy: 'policy:review-timeout@1' });
        // What the API makes of the refusal: 409, saying the default decided.
        const refusal = toApiError(decided.reason, {
          field: 'decision',
          finished: 'review: already decided by the policy default at the deadline',
        });
        expect(refusal).toBeInstanceOf(DomainError);
        expect(refusal).toMatchObject({
          status: 409,
          message: 'review: already decided by the policy default at the deadline',
        });
      }
      // One decision in the audit chain, by whoever won.
      const decisions = [];
      for await (const entry of services.audit.entries(tenant))
        if (entry.target === record._id && entry.action === 'memory.rejected') decisions.push(entry.actor);
      expect(decisions).toEqual([outcome.decidedBy]);
    }
    expect([...seen].sort()).toEqual(['default', 'reviewer']);
  });

  it('leaves the decision to the default when a reviewer’s decision in flight at the deadline fails', async () => {
    const { tenant, record, handle } = await startReview(3_000);
    // The reviewer's decision reads the record slowly and misses it: the final deadline passes while it is in flight,
    // and it fails, deciding nothing.
    slowMiss.set(record._id, 6_000);
    const refused = await decide(handle, 'rita', 'approve').then(
      () => 'decided',
      (error: Error) => JSON.stringify(error, Object.getOwnPropertyNames(error)) + String(error.cause),
    );
    expect(refused).toMatch(/not found/);
    expect(refused).not.toMatch(/already decided/);
    // Bounded by the test's timeout: a workflow that waited for the failed decision forever would never end.
    const outcome = (await handle.result()) as ReviewOutcome;
    expect(outcome).toMatchObject({ status: 'rejected', byDefault: true, decidedBy: 'policy:review-timeout@1' });
    expect((await services.memories.get(tenant, record._id))?.status).toBe('rejected');
  });
});
