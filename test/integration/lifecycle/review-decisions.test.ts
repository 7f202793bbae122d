import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../../src/app/services.js';
import type { Runtime } from '../../../src/app/runtime.js';
import { reviewPlan, type ReviewPlan } from '../../../src/governance/review/review-plan.js';
import { toApiError } from '../../../src/api/workflow-errors.js';
import { DomainError } from '../../../src/shared/errors.js';
import type { MemoryReviewInput, ReviewOutcome } from '../../../workflows/memory-review.definitions.js';
import { startWorker, testRuntime, uniqueId, type RunningWorker } from '../../support/harness.js';
import { insertReviewCandidate } from '../../support/review-candidate.js';

/**
 * A reviewer's decision against the review's final deadline, in real time on the dev server: the plan's deadlines
 * are seconds long, so a decision can land well before, across, and after the moment the default claims the item.
 */
describe('a reviewer’s decision and the final deadline', () => {
  let runtime: Runtime;
  let services: Services;
  let worker: RunningWorker;
  const slowMiss = new Map<string, number>();

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
    worker = await startWorker(runtime, uniqueId('review-tq'), { ...services, memories });
  });
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
  });

  /** The confidential plan with its deadlines shortened to `finalMs` (reminder and escalation before it). */
  function plan(finalMs: number): ReviewPlan {
    const days = reviewPlan(services.reviewSlaPolicy, services.reviewTimeoutPolicy, 'confidential');
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
    const finalMs = 4_000;
    const seen = new Set<'reviewer' | 'default'>();
    // The reviewer's Update lands well before the final deadline, racing it from either side, and after the default
    // has claimed the item.
    const rounds: { at: number | 'after-default'; must?: 'reviewer' | 'default' }[] = [
      { at: 0, must: 'reviewer' },
      { at: finalMs - 150 },
      { at: finalMs },
      { at: finalMs + 50 },
      { at: 'after-default', must: 'default' },
    ];
    for (const { at, must } of rounds) {
      const started = Date.now();
      const { tenant, record, handle } = await startReview(finalMs);
      if (at === 'after-default') {
        for (let i = 0; i < 300 && (await handle.query<{ state: string }>('reviewState')).state !== 'decided'; i++)
          await new Promise((r) => setTimeout(r, 50));
      } else {
        await new Promise((r) => setTimeout(r, Math.max(0, started + at - Date.now())));
      }
      const [decided] = await Promise.allSettled([decide(handle, 'rita', 'reject')]);
      const outcome = (await handle.result()) as ReviewOutcome;
      const winner = decided.status === 'fulfilled' ? 'reviewer' : 'default';
      if (must) expect(winner).toBe(must);
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
