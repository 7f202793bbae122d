/**
 * Bundles workflows/ with Temporal's bundler, which refuses Node built-ins and anything that pulls them
 * in transitively (tsc does not catch those). `--workflows <file>` checks another entry (used by tests).
 */
import path from 'node:path';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH, bundlerOptions } from '../app/worker/bundling.js';

const index = process.argv.indexOf('--workflows');
const workflowsPath = index >= 0 ? path.resolve(process.argv[index + 1]!) : WORKFLOWS_PATH;

try {
  const started = Date.now();
  const bundle = await bundleWorkflowCode({ workflowsPath, ...bundlerOptions, logger: new DefaultLogger('WARN') });
  console.log(`workflow bundle ok: ${(bundle.code.length / 1024).toFixed(0)} KiB in ${Date.now() - started} ms`);
} catch (error) {
  console.error(`workflow bundle failed: ${(error as Error).message}`);
  process.exit(1);
}
