import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { readStackManifest, loadStackConfig } from '../../../stack/stack-config.js';
import { waitForMessage } from '../../../stack/smtp/mailbox.js';
import { createServices, type Services } from '../../../app/services.js';
import type { Runtime } from '../../../app/runtime.js';
import { createLetheWorker } from '../../../app/worker/worker.js';
import { reviewPlan } from '../../../src/governance/review/review-plan.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { workflowBundlePath } from '../../support/paths.js';
import { quietTemporal } from '../../support/quiet-temporal.js';
import type { MemoryReviewInput, ReviewOutcome } from '../../../src/temporal/contracts/memory-review.contract.js';
import type { DisputeReviewInput } from '../../../src/temporal/contracts/dispute-review.contract.js';
import { insertReviewCandidate } from '../../support/review-candidate.js';

/**
 * Review deadlines are days long: the time-skipping server runs them in seconds, with the real stores behind.
 * Decisions racing a deadline run on the dev server instead (review-decisions.test.ts): the time-skipping server's
 * Updates can stall under load.
 */
describe('review deadlines (time-skipped days)', () => {
  let env: TestWorkflowEnvironment;
  let runtime: Runtime;
  let services: Services;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = uniqueId('review-tq');
  const mailDir = loadStackConfig().smtp.captureDir;

  beforeAll(async () => {
    quietTemporal();
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: readStackManifest().temporalTestServer } },
    });
    runtime = testRuntime();
    services = createServices(runtime, { taskQueue });
    worker = await createLetheWorker(runtime, {
      connection: env.nativeConnection,
      taskQueue,
      services,
      workflowBundle: { codePath: workflowBundlePath() },
    });
    running = worker.run();
    // A worker that stops on its own stalls every workflow here: say so, rather than leave only timeouts.
    running.catch((error: unknown) => console.error('the review worker stopped:', error));
  });
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await runtime?.close();
    await env?.teardown();
  });

  const candidate = (tenant: string, overrides: Partial<MemoryRecord> = {}) =>
    insertReviewCandidate(services, tenant, overrides);

  it('reminds the reviewers, escalates, then applies the policy default (reject) at the final deadline', async () => {
    const tenant = uniqueId('t');
    const record = await candidate(tenant);
    const plan = reviewPlan(services.rules.reviewSla, services.rules.reviewTimeout, 'confidential');
    expect(plan).toMatchObject({
      reminderMs: 86_400_000,
      escalationMs: 3 * 86_400_000,
      finalMs: 5 * 86_400_000,
      defaultDecision: 'reject',
    });
    const input: MemoryReviewInput = { tenant, memoryId: record._id, writtenBy: 'agent-1', plan };
    const started = Date.now();
    const serverStarted = await env.currentTimeMs();
    // Bounded by the test's timeout: the five days pass on the test server's clock, which skips them.
    const outcome = await env.client.workflow.execute<(i: MemoryReviewInput) => Promise<ReviewOutcome>>(
      'memoryReview',
      {
        taskQueue,
        workflowId: uniqueId('review'),
        args: [input],
      },
    );
    expect((await env.currentTimeMs()) - serverStarted).toBeGreaterThanOrEqual(plan.finalMs);
    console.info(`review default after ${plan.finalMs / 86_400_000} days in ${Date.now() - started} ms of wall time`);
    expect(outcome).toMatchObject({ status: 'rejected', byDefault: true, decidedBy: 'policy:review-timeout@1' });
    expect((await services.memories.get(tenant, record._id))?.status).toBe('rejected');
    const reminder = await waitForMessage(mailDir, (m) => m.subject === `Lethe: review reminder for ${record._id}`);
    const escalation = await waitForMessage(mailDir, (m) => m.subject === `Lethe: review escalation for ${record._id}`);
    await waitForMessage(mailDir, (m) => m.subject === `Lethe: review defaulted for ${record._id}`);
    expect(reminder.to).toEqual([runtime.config.smtp.reviewersEmail]);
    expect(escalation.to).toEqual([runtime.config.smtp.escalationEmail]);
    expect(reminder.text).not.toContain('52k');
  });

  it('tells the reviewers of a dispute, reminds them, escalates, and waits for a person (no default)', async () => {
    const tenant = uniqueId('t');
    const a = await candidate(tenant, { status: 'disputed', content: 'Salary is 52k.', writtenBy: 'agent-1' });
    const b = await candidate(tenant, {
      status: 'disputed',
      content: 'Salary is 61k.',
      writtenBy: 'agent-2',
      contentHash: 'y'.repeat(64),
    });
    const dispute = await services.disputes.open({
      tenant,
      memoryIds: [a._id, b._id],
      namespace: 'hr',
      attribute: 'salary',
      writers: ['agent-1', 'agent-2'],
      openedAt: new Date(),
    });
    const plan = reviewPlan(services.rules.reviewSla, services.rules.reviewTimeout, 'confidential');
    const input: DisputeReviewInput = {
      tenant,
      disputeId: dispute._id,
      memoryIds: dispute.memoryIds,
      writers: dispute.writers,
      plan,
    };
    const handle = await env.client.workflow.start('disputeReview', {
      taskQueue,
      workflowId: uniqueId('dispute'),
      args: [input],
    });
    await env.sleep('6 days');
    const subject = (kind: string) => `Lethe: dispute ${kind} for ${dispute._id}`;
    const opened = await waitForMessage(mailDir, (m) => m.subject === subject('opened'));
    await waitForMessage(mailDir, (m) => m.subject === subject('reminder'));
    const escalation = await waitForMessage(mailDir, (m) => m.subject === subject('escalation'));
    expect(opened.to).toEqual([runtime.config.smtp.reviewersEmail]);
    expect(escalation.to).toEqual([runtime.config.smtp.escalationEmail]);
    expect(opened.text).not.toMatch(/52k|61k/);
    // Past every deadline, both records are still disputed: a dispute is decided by a person, never by a timer.
    expect((await services.memories.getMany(tenant, [a._id, b._id])).map((r) => r.status)).toEqual([
      'disputed',
      'disputed',
    ]);
    const self = await handle
      .executeUpdate('adjudicate', {
        args: [{ reviewer: 'agent-2', outcome: 'keep-one', memoryId: b._id, reasonHash: 'h' }],
      })
      .catch((error: { cause?: Error }) => error.cause?.message);
    expect(self).toMatch(/may not adjudicate/);
    await services.disputes.keepReason(tenant, dispute._id, 'h', 'payslip of March');
    const answer = await handle.executeUpdate('adjudicate', {
      args: [{ reviewer: 'rita', outcome: 'reject-one', memoryId: a._id, reasonHash: 'h' }],
    });
    expect(answer).toMatchObject({ decidedBy: 'rita', statuses: { [a._id]: 'rejected', [b._id]: 'active' } });
    expect(await handle.result()).toMatchObject({ outcome: 'reject-one' });
  });
});
