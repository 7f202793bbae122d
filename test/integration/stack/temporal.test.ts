import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectivityCheck } from '../../../workflows/connectivity-check.workflow.js';
import { startWorker, testRuntime, uniqueId, type RunningWorker } from '../../support/harness.js';
import type { Runtime } from '../../../app/runtime.js';

describe('Temporal dev server', () => {
  let runtime: Runtime;
  let worker: RunningWorker;
  beforeAll(async () => {
    runtime = testRuntime();
    worker = await startWorker(runtime);
  });
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
  });

  it('runs a workflow whose activity reports every dependency the worker reaches', async () => {
    const report = await worker.client.workflow.execute(connectivityCheck, {
      taskQueue: worker.taskQueue,
      workflowId: uniqueId('connectivity'),
    });
    expect(Object.keys(report.dependencies).sort()).toEqual(['elasticsearch', 'mongodb', 'smtp', 'temporal']);
    expect(report.ready).toBe(true);
  });
});
