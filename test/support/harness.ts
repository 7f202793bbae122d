/**
 * What integration tests share: configuration for the real local stack, unique names per test, and a
 * worker on a task queue of the test's own.
 */
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { ActivityInterceptorsFactory, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/config.js';
import { createRuntime, type Runtime } from '../../app/runtime.js';
import { createLetheWorker } from '../../app/worker/worker.js';
import type { Services } from '../../app/services.js';
import { workflowBundlePath } from './paths.js';
import { quietTemporal } from './quiet-temporal.js';

quietTemporal();

/**
 * `<prefix>-<run tag><8 hex>`: the run tag (set once by the global setup) lets a run's teardown remove what it
 * made and nothing a second run on the same stack is still using.
 */
export function uniqueId(prefix: string): string {
  return `${prefix}-${testRunTag()}${randomUUID().slice(0, 8)}`;
}

export function testRunTag(): string {
  const tag = process.env.LETHE_TEST_RUN;
  if (tag && /^[0-9a-f]{4}$/.test(tag)) return tag;
  // A file run without the global setup: a tag of its own, which no teardown claims until it is stale.
  process.env.LETHE_TEST_RUN = randomUUID().slice(0, 4);
  return process.env.LETHE_TEST_RUN;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  // The production defaults, the derivation audit's `enforce` included: a suite that needs another mode sets it
  // in `overrides` and says why in one line.
  return loadConfig({
    ...process.env,
    LETHE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ...overrides,
  });
}

export function testRuntime(
  overrides: Record<string, string> = {},
  options: { spanExporter?: SpanExporter } = {},
): Runtime {
  return createRuntime(testConfig(overrides), 'lethe-test', options);
}

export interface RunningWorker {
  worker: Worker;
  taskQueue: string;
  client: Client;
  stop(): Promise<void>;
}

/** Starts a worker on a task queue of its own, from the bundle built once by the global setup. */
export async function startWorker(
  runtime: Runtime,
  taskQueue = uniqueId('tq'),
  services?: Services,
  activityInterceptors?: ActivityInterceptorsFactory[],
): Promise<RunningWorker> {
  const worker = await createLetheWorker(runtime, {
    taskQueue,
    workflowBundle: { codePath: workflowBundlePath() },
    ...(services ? { services } : {}),
    ...(activityInterceptors ? { activityInterceptors } : {}),
  });
  const running = worker.run();
  const client = new Client({ connection: runtime.temporal, namespace: runtime.config.temporal.namespace });
  return {
    worker,
    taskQueue,
    client,
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}
