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
import type { DisputeReviewInput } from '../../../workflows/dispute-review.definitions.js';
import { toApiError } from '../../../src/api/workflow-errors.js';
import { DomainError } from '../../../src/shared/errors.js';

/** Review deadlines are days long: the time-skipping server runs them in seconds, with the real stores behind. */
describe('review deadlines (time-skipped days)', () => {
  let env: TestWorkflowEnvironment;
  let runtime: Runtime;
  let services: Services;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = uniqueId('review-tq');
  const mailDir = loadStackConfig().smtp.captureDir;
  const slowMiss = new Map<string, number>();

  beforeAll(async () => {
    quietTemporal();
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: readStackManifest().temporalTestServer } },
    });
    runtime = testRuntime();
    services = createServices(runtime, { taskQueue });
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
    worker = await createLetheWorker(runtime, {
      connection: env.nativeConnection,
      taskQueue,
      services: { ...services, memories },
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

  async function candidate(tenant: string, overrides: Partial<MemoryRecord> = {}): Promise<MemoryRecord> {
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
      policy: {
        purpose: 'hr-administration',
        sensitivity: 'confidential',
        jurisdiction: 'PT',
        retentionClass: 'standard',
      },
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
      ...overrides,
    };
    await services.memories.insert(record);
    return record;
  }

  it('reminds the reviewers, escalates, then applies the policy default (reject) at the final deadline', async () => {
    const tenant = uniqueId('t');
    const record = await candidate(tenant);
    const plan = reviewPlan(services.reviewSlaPolicy, services.reviewTimeoutPolicy, 'confidential');
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
    const answer = await handle.executeUpdate('decideReview', {
      args: [{ reviewer: 'rita', decision: 'approve', reasonHash: 'h' }],
    });
    expect(answer).toMatchObject({ status: 'active', decidedBy: 'rita', byDefault: false });
    expect(await handle.result()).toMatchObject({ status: 'active' });
    expect((await services.memories.get(tenant, record._id))?.status).toBe('active');
  });

  it('lets either the reviewer or the deadline’s default decide, never both, and tells a losing reviewer it was the default', async () => {
    const plan = reviewPlan(services.reviewSlaPolicy, services.reviewTimeoutPolicy, 'confidential');
    const seen = new Set<'reviewer' | 'default'>();
    // The reviewer's Update lands well before the final deadline, racing it, and just after it fires.
    const rounds = [
      { before: 60_000, racing: false },
      { before: 1_000, racing: true },
      { before: 200, racing: true },
      { before: -1_000, racing: false },
    ];
    for (const { before, racing } of rounds) {
      const tenant = uniqueId('t');
      const record = await candidate(tenant);
      const handle = await env.client.workflow.start('memoryReview', {
        taskQueue,
        workflowId: uniqueId('review'),
        args: [{ tenant, memoryId: record._id, writtenBy: 'agent-1', plan }],
      });
      await env.sleep(plan.finalMs - before);
      if (before < 0) {
        // Past the deadline: the Update goes only once the default has claimed the decision.
        for (let i = 0; i < 100 && (await handle.query<{ state: string }>('reviewState')).state !== 'decided'; i++)
          await new Promise((r) => setTimeout(r, 100));
      }
      const [decided] = await Promise.allSettled([
        handle.executeUpdate('decideReview', { args: [{ reviewer: 'rita', decision: 'reject', reasonHash: 'h' }] }),
        racing ? env.sleep(2 * before) : Promise.resolve(),
      ]);
      const outcome = (await handle.result()) as ReviewOutcome;
      if (decided.status === 'fulfilled') {
        seen.add('reviewer');
        expect(outcome).toMatchObject({ decidedBy: 'rita', byDefault: false });
      } else {
        seen.add('default');
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
    // Well before the deadline the reviewer decides; just after it, the default has.
    expect([...seen].sort()).toEqual(['default', 'reviewer']);
  });

  it('leaves the decision to the default when a reviewer’s decision in flight at the deadline fails', async () => {
    const tenant = uniqueId('t');
    const record = await candidate(tenant);
    const plan = reviewPlan(services.reviewSlaPolicy, services.reviewTimeoutPolicy, 'confidential');
    const handle = await env.client.workflow.start('memoryReview', {
      taskQueue,
      workflowId: uniqueId('review'),
      args: [{ tenant, memoryId: record._id, writtenBy: 'agent-1', plan }],
    });
    await env.sleep(plan.finalMs - 3_000);
    // The reviewer's decision reads the record slowly and misses it: the final deadline passes while it is in flight,
    // and it fails, deciding nothing.
    slowMiss.set(record._id, 8_000);
    const refused = await handle
      .executeUpdate('decideReview', { args: [{ reviewer: 'rita', decision: 'approve', reasonHash: 'h' }] })
      .then(
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
    const plan = reviewPlan(services.reviewSlaPolicy, services.reviewTimeoutPolicy, 'confidential');
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
