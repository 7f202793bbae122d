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
import { isAlive } from '../../stack/processes.js';
import { bundleWorkflows } from '../../src/temporal/worker.js';
import { WORKFLOW_BUNDLE_VARIABLE, workflowBundleDir } from './paths.js';
import { cleanUpTestRun } from './stack-cleanup.js';
import { claimRunTag, releaseRunTag } from './run-tag.js';

export default async function setup(): Promise<() => Promise<void>> {
  // Slightly before now: the clocks of the servers and of this process may disagree by a little.
  const since = new Date(Date.now() - 5_000);
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
  const file = writeRunBundle(bundle.code, run);
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

/**
 * Writes this run's bundle to a file of its own (`<run tag>-<pid>.js`), through a temporary file renamed into
 * place, so that no worker ever reads a half-written bundle and no other run's setup writes over it. Bundles
 * that runs killed before their teardown left (their process is gone) are removed.
 */
function writeRunBundle(code: string, run: string): string {
  const dir = workflowBundleDir();
  fs.mkdirSync(dir, { recursive: true });
  for (const name of fs.readdirSync(dir)) {
    const pid = /^[0-9a-f]{4}-(\d+)\.(?:js|tmp)$/.exec(name)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !isAlive(Number(pid))) {
      fs.rmSync(path.join(dir, name), { force: true });
    }
  }
  const file = path.join(dir, `${run}-${process.pid}.js`);
  const temporary = path.join(dir, `${run}-${process.pid}.tmp`);
  fs.writeFileSync(temporary, code);
  fs.renameSync(temporary, file);
  return file;
}
