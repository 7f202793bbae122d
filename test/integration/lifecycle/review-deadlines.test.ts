import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { readStackManifest, loadStackConfig } from '../../../stack/stack-config.js';
import { waitForMessage } from '../../../stack/smtp/mailbox.js';
import { createServices, type Services } from '../../../src/app/services.js';
import type { Runtime } from '../../../src/app/runtime.js';
import { createLetheWorker } from '../../../src/temporal/worker.js';
import { reviewPlan } from '../../../src/governance/review/review-plan.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { workflowBundlePath } from '../../support/paths.js';
import { quietTemporal } from '../../support/quiet-temporal.js';
import type { MemoryReviewInput, ReviewOutcome } from '../../../workflows/memory-review.definitions.js';

/** Review deadlines are days long: the time-skipping server runs them in seconds, with the real stores behind. */
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
    worker = await createLetheWorker(runtime, { connection: env.nativeConnection, taskQueue, services, workflowBundle: { codePath: workflowBundlePath() } });
    running = worker.run();
  });
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await runtime?.close();
    await env?.teardown();
  });

  async function candidate(tenant: string): Promise<MemoryRecord> {
    const now = new Date();
    const record: MemoryRecord = {
      _id: `mem_${uniqueId('r')}`,
      tenant,
      namespace: 'hr',
      subjects: ['employee-1'],
      kind: 'fact',
      attribute: 'salary',
      content: 'Salary is 52k.',
      contentHash: 'x'.repeat(64),
      validFrom: now,
      validTo: null,
      recordedAt: now,
      policy: { purpose: 'hr-administration', sensitivity: 'confidential', jurisdiction: 'PT', retentionClass: 'standard' },
      provenance: { eventIds: [], parentIds: [], derivationRule: 'test', modelVersion: null, promptVersion: null },
      trustTier: 1,
      confidence: 0.9,
      version: 1,
      status: 'candidate',
      writtenBy: 'agent-1',
      expiresAt: null,
      highImpact: true,
      statusReason: 'money-contracts-hr-health',
      updatedAt: now,
    };
    await services.memories.insert(record);
    return record;
  }

  it('reminds the reviewers, escalates, then applies the policy default (reject) at the final deadline', async () => {
    const tenant = uniqueId('t');
    const record = await candidate(tenant);
    const plan = reviewPlan(services.reviewSlaPolicy, services.reviewTimeoutPolicy, 'confidential');
    expect(plan).toMatchObject({ reminderMs: 86_400_000, escalationMs: 3 * 86_400_000, finalMs: 5 * 86_400_000, defaultDecision: 'reject' });
    const input: MemoryReviewInput = { tenant, memoryId: record._id, writtenBy: 'agent-1', plan };
    const started = Date.now();
    const outcome = await env.client.workflow.execute<(i: MemoryReviewInput) => Promise<ReviewOutcome>>('memoryReview', {
      taskQueue,
      workflowId: uniqueId('review'),
      args: [input],
    });
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(outcome).toMatchObject({ status: 'rejected', byDefault: true, decidedBy: 'policy:review-timeout@1' });
    expect((await services.memories.get(tenant, record._id))?.status).toBe('rejected');
    const reminder = await waitForMessage(mailDir, (m) => m.subject === `Lethe: review reminder for ${record._id}`);
    const escalation = await waitForMessage(mailDir, (m) => m.subject === `Lethe: review escalation for ${record._id}`);
    await waitForMessage(mailDir, (m) => m.subject === `Lethe: review defaulted for ${record._id}`);
    expect(reminder.to).toEqual([runtime.config.smtp.reviewersEmail]);
    expect(escalation.to).toEqual([runtime.config.smtp.escalationEmail]);
    expect(reminder.text).not.toContain('52k');
  });

  it('answers a reviewer’s decision at once, and refuses the writer deciding on their own write', async () => {
    const tenant = uniqueId('t');
    const record = await candidate(tenant);
    const plan = reviewPlan(services.reviewSlaPolicy, services.reviewTimeoutPolicy, 'confidential');
    const handle = await env.client.workflow.start('memoryReview', {
      taskQueue,
      workflowId: uniqueId('review'),
      args: [{ tenant, memoryId: record._id, writtenBy: 'agent-1', plan }],
    });
    const self = await handle
      .executeUpdate('decideReview', { args: [{ reviewer: 'agent-1', decision: 'approve', reasonHash: 'h' }] })
      .catch((error: { cause?: Error }) => error.cause?.message);
    expect(self).toMatch(/may not decide on a write they made/);
    const answer = await handle.executeUpdate('decideReview', { args: [{ reviewer: 'rita', decision: 'approve', reasonHash: 'h' }] });
    expect(answer).toMatchObject({ status: 'active', decidedBy: 'rita', byDefault: false });
    expect(await handle.result()).toMatchObject({ status: 'active' });
    expect((await services.memories.get(tenant, record._id))?.status).toBe('active');
  });
});
