import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { readStackManifest } from '../../../stack/stack-config.js';
import { bundlerOptions } from '../../../app/worker/bundling.js';
import { quietTemporal } from '../../support/quiet-temporal.js';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('Temporal time-skipping test server', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    quietTemporal();
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: readStackManifest().temporalTestServer } },
    });
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('finishes a workflow with a 30-day timer by skipping the time, within the test timeout', async () => {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'long-timer',
      workflowsPath: path.join(here, '..', '..', 'fixtures', 'long-timer.workflow.ts'),
      bundlerOptions,
      activities: { stamp: async () => 'done' },
    });
    const started = Date.now();
    const serverStarted = await env.currentTimeMs();
    const result = await worker.runUntil(
      env.client.workflow.execute('sleepThirtyDays', { taskQueue: 'long-timer', workflowId: 'thirty-days' }),
    );
    expect(result).toBe('done');
    // The 30 days passed on the server's clock; on the wall clock the test's timeout is the bound.
    expect((await env.currentTimeMs()) - serverStarted).toBeGreaterThanOrEqual(30 * 86_400_000);
    console.info(`30-day timer in ${Date.now() - started} ms of wall time`);
  });
});
