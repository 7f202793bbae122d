/**
 * Checks that the Dockerfile's image, `.nvmrc`, engines and the Node running this check name one major (the release
 * runs on this process's Node, so on the image's major). Builds the release into a directory outside the checkout,
 * installs its production dependencies from its own lockfile, and runs the API and the worker from that directory
 * alone (cwd there, plain `node`, an environment built from nothing, LETHE_ENV=production) against the running local
 * stack. It waits for /healthz and /readyz and for the worker to start on the prebuilt workflow bundle, mints a token
 * with the release's CLI, and writes one event through the API (a workflow on the worker, MongoDB, Elasticsearch and
 * the embedding model). Both processes are stopped by pid, on failure too, and the check's tenant is removed from the
 * stack. Exits non-zero naming the step that failed.
 *
 * `LETHE_RELEASE_CHECK_PORT` (default 18080) is the API's port; the task queue, database and index prefix are the
 * check's own. `--keep` leaves the directory (release, keys, logs) for inspection.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readStackManifest } from '../stack/stack-config.js';
import type { Manifest } from './release/manifests.js';
import { imageNodeMajor, nodeMajorProblems } from './release/node-major.js';
import { CHECK_DATABASE, CHECK_INDEX_PREFIX, makeKeys, releaseEnvironment } from './release/check-environment.js';
import { removeCheckTenant } from './release/check-cleanup.js';
import { rssMiB, runCli, startBin, stop, tail, waitFor, type Started } from './release/release-processes.js';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const apiPort = Number(process.env.LETHE_RELEASE_CHECK_PORT ?? 18080);
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-release-check-'));
const releaseDir = path.join(workDir, 'release');
const logDir = path.join(workDir, 'logs');
fs.mkdirSync(logDir);

const timings: string[] = [];
let step = 'start';
async function timed<T>(name: string, run: () => T | Promise<T>): Promise<T> {
  step = name;
  const at = Date.now();
  const value = await run();
  timings.push(`${name} ${((Date.now() - at) / 1000).toFixed(1)} s`);
  return value;
}

/** Node looks for packages in every parent's node_modules: one above the release would hide a missing dependency. */
function assertNoParentModules(dir: string): void {
  for (let at = path.dirname(dir); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, 'node_modules'))) {
      throw new Error(`${at}/node_modules exists: the release could resolve packages from it (set TMPDIR elsewhere)`);
    }
    if (path.dirname(at) === at) return;
  }
}

/**
 * The npm configuration files the checkout's npm read (registry, CA file), which npm names to the scripts it runs: npm
 * on the project's Node would otherwise look for its global one beside that Node, in node_modules.
 */
const npmConfigFiles = Object.fromEntries(
  ['npm_config_globalconfig', 'npm_config_userconfig'].flatMap((name) => {
    const value = process.env[name];
    return value ? [[name, value]] : [];
  }),
);

const started: Started[] = [];
const stack = readStackManifest();
const keys = makeKeys(path.join(workDir, 'keys'));
const env = releaseEnvironment(keys, {
  stack,
  apiPort,
  taskQueue: `lethe-release-check-${randomUUID().slice(0, 8)}`,
});
const api = `http://127.0.0.1:${apiPort}`;
let failed = false;
let memory = '';
const tenant = `release-check-${randomUUID().slice(0, 8)}`;

try {
  const inUse = await fetch(`${api}/healthz`).then(
    () => true,
    () => false,
  );
  if (inUse) throw new Error(`port ${apiPort} already answers: set LETHE_RELEASE_CHECK_PORT`);
  assertNoParentModules(releaseDir);
  await timed('node major', () => {
    const found = nodeMajorProblems(repoDir);
    if (found.length > 0) throw new Error(found.join('; '));
  });

  await timed('build', () =>
    execFileSync(path.join(repoDir, 'node_modules', '.bin', 'tsx'), ['scripts/build-release.ts', '--out', releaseDir], {
      cwd: repoDir,
      stdio: 'inherit',
    }),
  );
  step = "the release's engines";
  const engines = (JSON.parse(fs.readFileSync(path.join(releaseDir, 'package.json'), 'utf8')) as Manifest).engines;
  if (engines?.node !== `^${imageNodeMajor(repoDir)}`)
    throw new Error(`the release's engines.node is ${engines?.node}`);
  await timed('npm ci --omit=dev', () =>
    execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: releaseDir,
      stdio: 'inherit',
      env: { PATH: env.PATH!, HOME: env.HOME!, ...npmConfigFiles },
    }),
  );

  // The API's key set holds the public half only, printed by the release's own CLI.
  const jwk = runCli(releaseDir, ['token', 'jwk', '--key', keys.tokenKeyFile, '--kid', keys.tokenKid], env);
  fs.writeFileSync(keys.jwksFile, JSON.stringify({ keys: [JSON.parse(jwk) as unknown] }));
  // The KEK keyring, made by the release's own CLI: production never generates one itself.
  runCli(releaseDir, ['keys', 'init', '--file', keys.kekFile], env);

  await timed('api and worker ready', async () => {
    started.push(startBin(releaseDir, 'lethe-api.mjs', 'api', env, logDir));
    started.push(startBin(releaseDir, 'lethe-worker.mjs', 'worker', env, logDir));
    const wait = { timeoutMs: 90_000, processes: started };
    await waitFor(
      'GET /healthz answers 200',
      async () => ((await fetch(`${api}/healthz`)).ok ? true : undefined),
      wait,
    );
    await waitFor('GET /readyz answers 200', async () => ((await fetch(`${api}/readyz`)).ok ? true : undefined), wait);
    const workflows = await waitFor(
      'the worker logs "worker started"',
      async () => {
        const line = fs
          .readFileSync(started[1]!.logFile, 'utf8')
          .split('\n')
          .find((l) => l.includes('"worker started"'));
        return line ? String((JSON.parse(line) as { workflows?: unknown }).workflows) : undefined;
      },
      wait,
    );
    if (workflows !== 'prebuilt bundle') throw new Error(`the worker ran workflows from "${workflows}"`);
  });

  await timed('authenticated write', async () => {
    const token = runCli(
      releaseDir,
      [
        'token',
        'mint',
        '--tenant',
        tenant,
        '--principal',
        'release-check-agent',
        '--roles',
        'agent',
        '--ttl',
        '600',
      ].concat(['--key', keys.tokenKeyFile, '--kid', keys.tokenKid]),
      env,
    ).trim();
    const event = {
      source: 'release-check',
      externalId: randomUUID(),
      namespace: 'support',
      subjects: ['release-check-subject'],
      content: 'The release check wrote this event.',
      occurredAt: new Date().toISOString(),
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${api}/v1/tenants/${tenant}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(event),
      });
    const anonymous = await post({});
    if (anonymous.status !== 401) throw new Error(`without a token the write answered ${anonymous.status}, not 401`);
    const written = await post({ authorization: `Bearer ${token}` });
    const body = (await written.json()) as { id?: string; outcome?: string };
    if (written.status !== 201 || body.outcome !== 'created' || !body.id) {
      throw new Error(`the write answered ${written.status} ${JSON.stringify(body)}`);
    }
  });
  memory = started.map((p) => `${p.name} ${rssMiB(p) ?? '?'} MiB`).join(', ');
} catch (error) {
  failed = true;
  console.error(`release check failed at "${step}": ${(error as Error).message}`);
} finally {
  await Promise.all(started.map((p) => stop(p)));
  const left = await removeCheckTenant({ stack, database: CHECK_DATABASE, indexPrefix: CHECK_INDEX_PREFIX, tenant });
  if (left.length > 0) console.error(`release check: could not remove tenant ${tenant}'s ${left.join('; ')}`);
  if (failed) for (const p of started) console.error(`--- ${p.name} log (last lines)\n${tail(p.logFile)}`);
  if (keep) console.log(`kept ${workDir}`);
  else fs.rmSync(workDir, { recursive: true, force: true });
}

const size = (dir: string) => execFileSync('du', ['-sh', dir], { encoding: 'utf8' }).split('\t')[0];
if (failed) process.exit(1);
console.log(`release check ok on Node ${process.version}: ${timings.join(', ')}; RSS after one write: ${memory}`);
if (keep) console.log(`release directory: ${size(releaseDir)} with its dependencies`);
