/**
 * Runs once before the suite: makes sure the local stack answers (it starts it when it does not), claims the
 * run's tag, and bundles the workflows once, into a file of this run's own, so that each test's worker starts in
 * milliseconds. Afterwards, removes what the run's tests left on the stack, its MongoDB documents included
 * (`LETHE_KEEP_TEST_DATA=1` keeps it, to look at).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadStackConfig } from '../../stack/stack-config.js';
import { bundleWorkflows } from '../../app/worker/worker.js';
import { WORKFLOW_BUNDLE_VARIABLE, workflowBundleDir } from './paths.js';
import { cleanUpTestRun } from './stack-cleanup.js';
import { writeRunBundle } from './run-bundle.js';
import { claimRunTag, releaseRunTag } from './run-tag.js';

export default async function setup(): Promise<() => Promise<void>> {
  // Slightly before now: the clocks of the servers and of this process may disagree by a little.
  const since = new Date(Date.now() - 5_000);
  // The suite runs the local development configuration (LETHE_ENV has no default); the test workers inherit it.
  process.env.LETHE_ENV ??= 'development';
  // The suite's processes share the stack's keyring: a scheduled rotation firing mid-run would destroy epochs under
  // tests that count them. The tests of the schedule set an interval of their own.
  process.env.LETHE_KEK_ROTATION_EVERY ??= 'off';
  const stack = loadStackConfig();
  execFileSync(process.execPath, ['--import', 'tsx', path.join(stack.repoDir, 'stack', 'cli.ts'), 'ensure'], {
    stdio: 'inherit',
    cwd: stack.repoDir,
  });
  // Inherited by the test workers: every test tenant and task queue of this run carries it. Claimed, so that no
  // other run on this stack has it while this one's documents are there.
  const run = await claimRunTag();
  process.env.LETHE_TEST_RUN = run;
  const bundle = await bundleWorkflows();
  const file = writeRunBundle(workflowBundleDir(), bundle.code, run);
  process.env[WORKFLOW_BUNDLE_VARIABLE] = file;
  return async () => {
    fs.rmSync(file, { force: true });
    if (process.env.LETHE_KEEP_TEST_DATA === '1') return;
    const started = Date.now();
    const report = await cleanUpTestRun(since, run);
    await releaseRunTag(run);
    console.log(
      `test run ${run} cleaned up in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(report)}`,
    );
  };
}
