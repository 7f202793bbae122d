/**
 * A staged batch holds the content and subjects of a write until its ingestion workflow discards it. An ingestion
 * that fails must discard it too: nothing would ever read it again, and an erasure would not know it is there.
 * The failures are injected into one activity of a worker of the test's own; everything else is the real
 * workflow over the real stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NativeConnection, Worker } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { createServices, type Services } from '../../../app/services.js';
import type { Runtime } from '../../../app/runtime.js';
import { createAllActivities } from '../../../app/worker/activities.js';
import { WriteBatchSchema } from '../../../src/ingestion/write-schemas.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { TEST_INDEX_SETTINGS, uniqueTenant } from '../../support/app.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { workflowBundlePath } from '../../support/paths.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

type Activities = ReturnType<typeof createAllActivities>;

describe('an ingestion that fails', () => {
  let runtime: Runtime;
  const running: { worker: Worker; done: Promise<void>; connection: NativeConnection }[] = [];

  beforeAll(() => {
    runtime = testRuntime();
  });
  afterAll(async () => {
    for (const { worker, done, connection } of running) {
      worker.shutdown();
      await done;
      await connection.close();
    }
    await runtime?.close();
  });

  /** Services on a task queue of their own, served by the real activities with `faults` in place of some. */
  async function servicesWith(faults: (services: Services) => Partial<Activities>): Promise<Services> {
    const taskQueue = uniqueId('tq');
    const services = createServices(runtime, { taskQueue, indexSettings: TEST_INDEX_SETTINGS });
    await services.ensureIndexes();
    const real = createAllActivities(runtime, services);
    const connection = await NativeConnection.connect({ address: runtime.config.temporal.address });
    const worker = await Worker.create({
      connection,
      namespace: runtime.config.temporal.namespace,
      taskQueue,
      workflowBundle: { codePath: workflowBundlePath() },
      activities: { ...real, ...faults(services) },
    });
    running.push({ worker, done: worker.run(), connection });
    return services;
  }

  const batch = () =>
    WriteBatchSchema.parse({
      events: [sampleEvent({ subjects: ['subject-staged'], content: 'Ana said her new address is Rua Augusta 12.' })],
      memories: [sampleMemory({ subjects: ['subject-staged'], content: 'Lives at Rua Augusta 12.' })],
    });
  const stagedFor = (tenant: string) => runtime.db.collection(Collections.staging).countDocuments({ tenant });

  it('a failed admission leaves no staged batch behind', async () => {
    const tenant = uniqueTenant();
    let stagedWhenAdmitting = 0;
    const services = await servicesWith((s) => ({
      async admitStagedBatch(input) {
        stagedWhenAdmitting = (await s.staging.get(input.tenant, input.stageId)) ? 1 : 0;
        throw ApplicationFailure.nonRetryable('the store refused the batch', 'StoreUnavailable');
      },
    }));
    const failure = await services.workflows.writes.submit({ id: 'agent-1', tenant, roles: ['agent'] }, batch()).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(stagedWhenAdmitting).toBe(1);
    expect(await stagedFor(tenant)).toBe(0);
  });

  it('a failure after admission (indexing) leaves no staged batch behind', async () => {
    const tenant = uniqueTenant();
    let stagedWhenIndexing = 0;
    const services = await servicesWith(() => ({
      async indexMemories(input) {
        stagedWhenIndexing = await stagedFor(input.tenant);
        throw ApplicationFailure.nonRetryable('the index refused the batch', 'SearchIndexError');
      },
    }));
    const failure = await services.workflows.writes.submit({ id: 'agent-1', tenant, roles: ['agent'] }, batch()).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(stagedWhenIndexing).toBe(1);
    expect(await stagedFor(tenant)).toBe(0);
  });
});
