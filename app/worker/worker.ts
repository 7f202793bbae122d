import {
  DefaultLogger,
  NativeConnection,
  Worker,
  bundleWorkflowCode,
  type ActivityInterceptorsFactory,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { Context } from '@temporalio/activity';
import type { Runtime } from '../runtime.js';
import { createServices, type Services } from '../services.js';
import { createAllActivities } from './activities.js';
import { OpenTelemetryActivityInboundInterceptor, makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { WORKFLOWS_PATH, WORKFLOW_INTERCEPTOR_MODULES, bundlerOptions, prebuiltWorkflowBundle } from './bundling.js';
import { SanitizingActivityInterceptor } from './sanitizing-interceptor.js';
import { temporalConnectionOptions } from '../../src/config/temporal-connection.js';

export interface WorkerOptions {
  taskQueue?: string;
  /**
   * A prebuilt bundle (tests build it once); otherwise a release's own bundle when there is one, else the workflows
   * are bundled at start.
   */
  workflowBundle?: WorkflowBundleOption;
  connection?: NativeConnection;
  services?: Services;
  /** Further activity interceptors, inside the sanitizing one (tests gate steps with them). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /**
   * How long in-flight activities may run on after `shutdown()` before they are cancelled (Temporal's default: 0,
   * cancelled at once). The process's composition root passes `LETHE_SHUTDOWN_GRACE_MS`.
   */
  shutdownGraceMs?: number;
}

export function bundleWorkflows() {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, ...bundlerOptions, logger: new DefaultLogger('WARN') });
}

/** Where the worker's workflow code comes from: given, the release's prebuilt bundle, or bundled at start. */
export function workflowSource(
  given: WorkflowBundleOption | undefined = undefined,
):
  | { workflowBundle: WorkflowBundleOption }
  | { workflowsPath: string; bundlerOptions: Pick<typeof bundlerOptions, 'webpackConfigHook'> } {
  const bundle = given ?? prebuiltWorkflowBundle();
  return bundle
    ? { workflowBundle: bundle }
    : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: { webpackConfigHook: bundlerOptions.webpackConfigHook } };
}

export async function createLetheWorker(runtime: Runtime, options: WorkerOptions = {}): Promise<Worker> {
  const connection =
    options.connection ?? (await NativeConnection.connect(temporalConnectionOptions(runtime.config.temporal)));
  const source = workflowSource(options.workflowBundle);
  const { tracing } = runtime;
  return Worker.create({
    connection,
    namespace: runtime.config.temporal.namespace,
    taskQueue: options.taskQueue ?? runtime.config.temporal.taskQueue,
    maxCachedWorkflows: runtime.config.temporal.maxCachedWorkflows,
    activities: createAllActivities(runtime, options.services ?? createServices(runtime)),
    interceptors: {
      activity: [
        // Outermost: an activity's span covers what the others do, and continues its workflow's trace.
        ...(tracing.enabled
          ? [
              (ctx: Context) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: tracing.tracer }),
              }),
            ]
          : []),
        () => ({ inbound: new SanitizingActivityInterceptor() }),
        ...(options.activityInterceptors ?? []),
      ],
      // A bundle holds its workflow interceptors already; bundling at start adds them here.
      ...('workflowsPath' in source ? { workflowModules: WORKFLOW_INTERCEPTOR_MODULES } : {}),
    },
    // The bundle's interceptors hand workflow spans to this sink whether or not tracing is on.
    sinks: { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) },
    // A heartbeat's cursor reaches the server at most this long after it was given (the SDK's default is 0.8 of the
    // heartbeat timeout, 24 s for a purge): an attempt that dies resumes close to where it was, not 24 s behind.
    maxHeartbeatThrottleInterval: '5 seconds',
    ...(options.shutdownGraceMs !== undefined ? { shutdownGraceTime: options.shutdownGraceMs } : {}),
    ...source,
  });
}
