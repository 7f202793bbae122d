/**
 * Reviews wait days for a person. A worker keeps at most `LETHE_WORKER_MAX_CACHED_WORKFLOWS` workflows in memory
 * between their tasks, so thousands of held memories cannot fill its workflow thread's heap; a review that left the
 * cache is replayed from its history when its reviewer decides, and decides as if it had never left. Dev server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../../app/services.js';
import type { Runtime } from '../../../app/runtime.js';
import { reviewPlan } from '../../../src/governance/review/review-plan.js';
import type { MemoryReviewInput, ReviewOutcome } from '../../../src/temporal/contracts/memory-review.contract.js';
import { startWorker, testRuntime, uniqueId, type RunningWorker } from '../../support/harness.js';
import { insertReviewCandidate } from '../../support/review-candidate.js';

const CACHE = 2;
const REVIEWS = 8;

describe('a worker’s cache of waiting workflows', () => {
  let runtime: Runtime;
  let services: Services;
  let worker: RunningWorker;

  beforeAll(async () => {
    runtime = testRuntime({ LETHE_WORKER_MAX_CACHED_WORKFLOWS: String(CACHE) });
    services = createServices(runtime);
    worker = await startWorker(runtime, uniqueId('cache-tq'), services);
  });
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
  });

  it('keeps no more than its bound in memory, and a review that left it still decides once, from its history', async () => {
    const tenant = uniqueId('t');
    const plan = reviewPlan(services.rules.reviewSla, services.rules.reviewTimeout, 'confidential');
    const reviews = [];
    for (let n = 0; n < REVIEWS; n++) {
      const record = await insertReviewCandidate(services, tenant);
      const input: MemoryReviewInput = { tenant, memoryId: record._id, writtenBy: 'agent-1', plan };
      const handle = await worker.client.workflow.start('memoryReview', {
        taskQueue: worker.taskQueue,
        workflowId: uniqueId('review'),
        args: [input],
      });
      // Its first task has run: it waits for a reviewer, with its deadlines' timers set.
      await handle.query('reviewState');
      reviews.push({ record, handle });
    }
    expect(worker.worker.getStatus().numCachedWorkflows).toBeLessThanOrEqual(CACHE);

    // The first reviews were evicted long ago; each decides as a reviewer asks, and only once.
    for (const { record, handle } of reviews) {
      const answer = await handle.executeUpdate<ReviewOutcome, [unknown]>('decideReview', {
        args: [{ reviewer: 'rita', decision: 'approve', reasonHash: 'h' }],
      });
      expect(answer).toMatchObject({ status: 'active', decidedBy: 'rita', byDefault: false });
      expect(await handle.result()).toMatchObject({ status: 'active' });
      expect((await services.memories.get(tenant, record._id))?.status).toBe('active');
    }
    expect(worker.worker.getStatus().numCachedWorkflows).toBeLessThanOrEqual(CACHE);
  });
});
