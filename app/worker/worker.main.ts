import { NativeConnection, Runtime as TemporalRuntime, type Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/config/config.js';
import { createRuntime } from '../runtime.js';
import { createLetheWorker, workflowSource } from './worker.js';
import { createServices } from '../services.js';
import { ensureKekRotationSchedule } from '../../src/temporal/kek-rotation-schedule.js';
import { exitGracefully } from '../graceful-exit.js';
import { temporalConnectionOptions } from '../../src/config/temporal-connection.js';
import { startMetricsListener, type MetricsListener } from '../../src/observability/metrics-listener.js';
import {
  startCheckpointPublisher,
  type CheckpointPublisher,
} from '../../src/governance/audit/log-tree/checkpoint-publisher.js';

/** After the grace, cancelled activities get this long to report their cancellation before the process exits 1. */
const CANCEL_MARGIN_MS = 5000;

async function main(): Promise<void> {
  const runtime = createRuntime(loadConfig(), 'lethe-worker');
  const { config } = runtime;
  // Signals are this process's to handle (below), not the Temporal runtime's default handler's. The runtime's own
  // series (pollers, task slots, schedule-to-start) are labelled by namespace, task queue and type names only.
  const temporalMetrics = config.metrics.temporalRuntime;
  TemporalRuntime.install({
    shutdownSignals: [],
    ...(temporalMetrics
      ? {
          telemetryOptions: {
            metrics: { prometheus: { bindAddress: `${temporalMetrics.host}:${temporalMetrics.port}` } },
          },
        }
      : {}),
  });
  // What a signal finds started so far: it may come while the workflows are still being bundled.
  const started: {
    worker?: Worker;
    running?: Promise<void>;
    connection?: NativeConnection;
    listener?: MetricsListener;
    publisher?: CheckpointPublisher;
  } = {};
  exitGracefully(
    async () => {
      // Stops polling; activities in flight run on for the grace, then are cancelled and retried elsewhere.
      if (started.worker?.getState() === 'RUNNING') started.worker.shutdown();
      await started.running;
      await started.publisher?.stop();
      await started.listener?.close();
      await started.connection?.close();
      await runtime.close();
    },
    { log: runtime.log, deadlineMs: config.shutdown.graceMs + CANCEL_MARGIN_MS },
  );
  const services = createServices(runtime, { metrics: { processMetrics: true } });
  await services.ensureIndexes();
  if (config.metrics.worker) {
    const listener = await startMetricsListener({
      ...config.metrics.worker,
      ...(config.metrics.token ? { token: config.metrics.token } : {}),
      metrics: services.metrics,
    });
    started.listener = listener;
    runtime.log.info({ url: listener.url }, 'worker metrics listening');
  }
  const connection = await NativeConnection.connect(temporalConnectionOptions(config.temporal));
  started.connection = connection;
  const worker = await createLetheWorker(runtime, { services, connection, shutdownGraceMs: config.shutdown.graceMs });
  started.worker = worker;
  // Every registered tenant's hourly sweep exists again, whatever happened to the schedules meanwhile.
  const schedules = await services.retentionScheduler.ensureAll();
  // The KEK rotation runs on the configured interval, which certificates date the copies' lapse from.
  const kekRotation = await ensureKekRotationSchedule({
    client: services.temporalClient,
    taskQueue: config.temporal.taskQueue,
    everyMs: config.sealing.rotationEveryMs,
  });
  // Which workflow code runs: a release's prebuilt bundle, or the sources bundled at start.
  const workflows = 'workflowBundle' in workflowSource() ? 'prebuilt bundle' : 'bundled at start';
  // Every audit log that grows gets a signed checkpoint within an interval (any worker may sign: the same size
  // signs to the same note), then submitted to each configured witness.
  started.publisher = startCheckpointPublisher({
    checkpoints: services.checkpoints,
    witnesses: services.witnesses,
    everyMs: config.log.checkpointEveryMs,
    log: runtime.log,
  });
  started.running = worker.run();
  runtime.log.info(
    {
      taskQueue: config.temporal.taskQueue,
      retentionSchedules: schedules,
      kekRotation: { schedule: kekRotation, everyMs: config.sealing.rotationEveryMs },
      workflows,
      witnesses: config.log.witnesses.map((w) => w.name),
      node: process.version,
    },
    'worker started',
  );
  await started.running;
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`configuration error: ${error.message}\n`);
  else process.stderr.write(`worker failed: ${(error as Error).message}\n`);
  process.exit(1);
});
