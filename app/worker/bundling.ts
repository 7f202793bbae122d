import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundleOptions, WorkflowBundleOption } from '@temporalio/worker';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** From the checkout (tsx) the sources are `.ts`; from a build, the compiled `.js` beside them. */
const fromSource = import.meta.url.endsWith('.ts');

export const WORKFLOWS_PATH = path.join(repoDir, 'workflows', fromSource ? 'index.ts' : 'index.js');

/** Where `npm run build:release` writes the workflow bundle, at the root of the release directory. */
export const PREBUILT_WORKFLOW_BUNDLE_FILE = 'workflow-bundle.js';

/**
 * Workflow interceptors compiled into every bundle: OpenTelemetry's, which continue the caller's trace inside the
 * workflow and hand its spans to the worker's `exporter` sink (spans go nowhere while tracing is off).
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [
  createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/** ESM sources import `./x.js`; the workflow bundler must resolve those to the `.ts` files. */
export const bundlerOptions: Pick<BundleOptions, 'webpackConfigHook' | 'workflowInterceptorModules'> = {
  workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
  webpackConfigHook: (config) => ({
    ...config,
    resolve: { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } },
  }),
};

/**
 * The release's prebuilt bundle, when this code runs compiled and the bundle sits beside it. Never from source: a
 * bundle left in a checkout would run workflows older than the code beside it, so development always bundles.
 */
export function prebuiltWorkflowBundle(): WorkflowBundleOption | undefined {
  if (fromSource) return undefined;
  const codePath = path.join(repoDir, PREBUILT_WORKFLOW_BUNDLE_FILE);
  return fs.existsSync(codePath) ? { codePath } : undefined;
}
