import path from 'node:path';
import { loadStackConfig } from '../../stack/stack-config.js';

/** Set by the global setup for its test workers: the file holding this run's workflow bundle. */
export const WORKFLOW_BUNDLE_VARIABLE = 'LETHE_TEST_WORKFLOW_BUNDLE';

/** Where runs keep their workflow bundles: `<run tag>-<pid of the run>.js`, one file per run. */
export function workflowBundleDir(): string {
  return path.join(loadStackConfig().stateDir, 'test-workflow-bundles');
}

/**
 * The workflow bundle the global setup built once for this run. Each run writes its own file, so a second run on
 * the same checkout never rewrites the bundle a first one's workers are loading. (The fixed path is where setups
 * before per-run bundles wrote theirs.)
 */
export function workflowBundlePath(): string {
  return process.env[WORKFLOW_BUNDLE_VARIABLE] ?? path.join(loadStackConfig().stateDir, 'test-workflow-bundle.js');
}
