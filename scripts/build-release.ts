/**
 * Builds the directory a deployment runs from (`dist/release/`, or `--out <dir>`), needing nothing of the checkout
 * at run time: the compiled JavaScript of src/, app/, activities/ and workflows/ (tsc, ESM with `.js` imports), the
 * workflow bundle prebuilt (the worker loads it instead of bundling at start), the consoles' static files, the
 * policies, `bin/` entries, and a package.json and package-lock.json with the production dependencies only. It
 * installs nothing: `npm ci --omit=dev --ignore-scripts` in that directory does (the Dockerfile and
 * `npm run check:release` both run it), so the build itself needs no network.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { PREBUILT_WORKFLOW_BUNDLE_FILE, WORKFLOWS_PATH, bundlerOptions } from '../app/worker/bundling.js';
import { productionLockfile, productionManifest, type Lockfile, type Manifest } from './release/manifests.js';
import { BIN_ENTRIES } from './release/bin-entries.js';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--out');
const outDir = path.resolve(outArg >= 0 ? process.argv[outArg + 1]! : path.join(repoDir, 'dist', 'release'));

const started = Date.now();
const phases: string[] = [];
async function phase(name: string, run: () => unknown): Promise<void> {
  const at = Date.now();
  await run();
  phases.push(`${name} ${((Date.now() - at) / 1000).toFixed(1)} s`);
}

const bin = (name: string) => path.join(repoDir, 'node_modules', '.bin', name);
const run = (file: string, args: string[]) => execFileSync(file, args, { cwd: repoDir, stdio: 'inherit' });

// Only files this build writes are kept: node_modules from an earlier install goes too, so it matches the lockfile.
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });

await phase('tsc', () => run(bin('tsc'), ['-p', 'tsconfig.release.json', '--outDir', outDir]));

await phase('workflow bundle', async () => {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...bundlerOptions,
    logger: new DefaultLogger('WARN'),
  });
  fs.writeFileSync(path.join(outDir, PREBUILT_WORKFLOW_BUNDLE_FILE), code);
});

// The API serves the consoles from dist/console beside its compiled app/ (app/api/console-static.ts).
await phase('consoles', () =>
  run(bin('vite'), [
    'build',
    '--config',
    'console/vite.config.ts',
    '--logLevel',
    'warn',
    '--outDir',
    path.join(outDir, 'dist', 'console'),
  ]),
);

await phase('policies, manifests, bin', () => {
  // The policies only: their tests are for `npm run check:policies`, in the checkout.
  const policiesDir = path.join(outDir, 'policies');
  fs.mkdirSync(policiesDir);
  for (const name of fs.readdirSync(path.join(repoDir, 'policies')).filter((n) => n.endsWith('.json'))) {
    fs.copyFileSync(path.join(repoDir, 'policies', name), path.join(policiesDir, name));
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(repoDir, 'package.json'), 'utf8')) as Manifest;
  const lock = JSON.parse(fs.readFileSync(path.join(repoDir, 'package-lock.json'), 'utf8')) as Lockfile;
  fs.writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify(productionManifest(manifest), null, 2)}\n`);
  fs.writeFileSync(path.join(outDir, 'package-lock.json'), `${JSON.stringify(productionLockfile(lock), null, 2)}\n`);
  // The same guard as the checkout's: no dependency runs code at install.
  fs.writeFileSync(path.join(outDir, '.npmrc'), 'ignore-scripts=true\n');
  fs.mkdirSync(path.join(outDir, 'bin'));
  for (const [name, text] of Object.entries(BIN_ENTRIES)) {
    fs.writeFileSync(path.join(outDir, 'bin', name), text, { mode: 0o755 });
  }
});

console.log(`release built in ${outDir} in ${((Date.now() - started) / 1000).toFixed(1)} s (${phases.join(', ')})`);
