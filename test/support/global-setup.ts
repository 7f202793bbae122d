/**
 * Runs once before the suite: makes sure the local stack answers (it starts it when it does not) and
 * bundles the workflows once, so that each test's worker starts in milliseconds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadStackConfig } from '../../stack/stack-config.js';
import { bundleWorkflows } from '../../src/temporal/worker.js';
import { workflowBundlePath } from './paths.js';

export default async function setup(): Promise<void> {
  const stack = loadStackConfig();
  execFileSync(process.execPath, ['--import', 'tsx', path.join(stack.repoDir, 'stack', 'cli.ts'), 'ensure'], {
    stdio: 'inherit',
    cwd: stack.repoDir,
  });
  const bundle = await bundleWorkflows();
  const file = workflowBundlePath();
  fs.writeFileSync(file, bundle.code);
}
