/**
 * Runs once before the suite: makes sure the local stack answers (it starts it when it does not) and
 * bundles the workflows once, so that each test's worker starts in milliseconds. Afterwards, removes what the
 * run's tests left on the stack (`LETHE_KEEP_TEST_DATA=1` keeps it, to look at).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadStackConfig } from '../../stack/stack-config.js';
import { bundleWorkflows } from '../../src/temporal/worker.js';
import { workflowBundlePath } from './paths.js';
import { cleanUpTestRun } from './stack-cleanup.js';

export default async function setup(): Promise<() => Promise<void>> {
  // Slightly before now: the clocks of the servers and of this process may disagree by a little.
  const since = new Date(Date.now() - 5_000);
  // Inherited by the test workers: every test tenant and task queue of this run carries it.
  const run = randomUUID().slice(0, 4);
  process.env.LETHE_TEST_RUN = run;
  const stack = loadStackConfig();
  execFileSync(process.execPath, ['--import', 'tsx', path.join(stack.repoDir, 'stack', 'cli.ts'), 'ensure'], {
    stdio: 'inherit',
    cwd: stack.repoDir,
  });
  const bundle = await bundleWorkflows();
  const file = workflowBundlePath();
  fs.writeFileSync(file, bundle.code);
  return async () => {
    if (process.env.LETHE_KEEP_TEST_DATA === '1') return;
    const report = await cleanUpTestRun(since, run);
    console.log(`test run cleaned up: ${JSON.stringify(report)}`);
  };
}
