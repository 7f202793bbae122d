import { loadConfig } from '../config/load-config.js';
import { ConfigError } from '../config/config.js';
import { createRuntime } from '../app/runtime.js';
import { createLetheWorker, workflowSource } from './worker.js';
import { createServices } from '../app/services.js';

async function main(): Promise<void> {
  const runtime = createRuntime(loadConfig(), 'lethe-worker');
  const services = createServices(runtime);
  await services.ensureIndexes();
  const worker = await createLetheWorker(runtime, { services });
  // Every registered tenant's hourly sweep exists again, whatever happened to the schedules meanwhile.
  const schedules = await services.retentionScheduler.ensureAll();
  // Which workflow code runs: a release's prebuilt bundle, or the sources bundled at start.
  const workflows = 'workflowBundle' in workflowSource() ? 'prebuilt bundle' : 'bundled at start';
  runtime.log.info(
    { taskQueue: runtime.config.temporal.taskQueue, retentionSchedules: schedules, workflows },
    'worker started',
  );
  await worker.run();
  await runtime.close();
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`configuration error: ${error.message}\n`);
  else process.stderr.write(`worker failed: ${(error as Error).message}\n`);
  process.exit(1);
});
