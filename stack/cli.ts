/**
 * `npm run stack:up | stack:down | stack:status` — the local stack of real servers (Temporal dev server,
 * PostgreSQL + FerretDB, Elasticsearch, SMTP capture, the AWS KMS emulator, a C2SP tlog-witness). `ensure` is `up`
 * that stays quiet when all answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadStackConfig, type StackConfig, type StackManifest } from './stack-config.js';
import { recordStackWitness, stackServices, type StackService } from './services.js';
import { StackError, isAlive, runBuildScript, sleep, tail, waitFor } from './processes.js';

type Command = 'up' | 'down' | 'status' | 'ensure';

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

async function withLock<T>(config: StackConfig, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(config.stateDir, 'stack.lock');
  fs.mkdirSync(config.stateDir, { recursive: true });
  for (let waited = 0; ; waited += 500) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch {
      const holder = Number(fs.readFileSync(lock, 'utf8'));
      if (!isAlive(holder)) fs.rmSync(lock, { force: true });
      else if (waited > 30 * 60_000) throw new Error(`stack lock held by pid ${holder} for 30 minutes`);
      else await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

async function state(service: StackService): Promise<'ours' | 'external' | 'starting' | 'down'> {
  const healthy = await service.healthy().catch(() => false);
  const pid = service.ownPid();
  if (healthy) return pid !== undefined ? 'ours' : 'external';
  return pid !== undefined ? 'starting' : 'down';
}

function failure(service: StackService, why: string): StackError {
  return new StackError(service.name, `${why}\n  log: ${service.logFile}\n${tail(service.logFile)}`, service.logFile);
}

async function up(config: StackConfig, quiet: boolean): Promise<void> {
  const started = Date.now();
  const { services, testServer } = stackServices(config);
  const states = new Map<StackService, Awaited<ReturnType<typeof state>>>();
  for (const service of services) states.set(service, await state(service));
  const toStart = services.filter((s) => states.get(s) === 'down');
  const starting = services.filter((s) => states.get(s) === 'starting');

  // Builds run one at a time: a cold Go or Maven build already uses both cores.
  const artifacts = new Map<StackService, string | undefined>();
  for (const service of toStart) {
    const t = Date.now();
    artifacts.set(service, await service.build());
    if (Date.now() - t > 2000) log(`built ${service.name} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  const testServerPath = (await testServer.build()) ?? '';
  // Not a server: the sentence-embedding model the API and worker load from disk (fetched once, then cached).
  const embeddingModelDir = await runBuildScript(
    'embedding-model',
    path.join(config.repoDir, 'stack', 'embedding-model', 'fetch.sh'),
    {},
  );

  // PostgreSQL must answer before FerretDB connects to it.
  const ordered = [...toStart.filter((s) => s.name === 'postgres'), ...toStart.filter((s) => s.name !== 'postgres')];
  for (const service of ordered) {
    try {
      await service.start(artifacts.get(service));
    } catch (error) {
      throw failure(service, `failed to start: ${(error as Error).message.split('\n')[0]}`);
    }
    if (service.name === 'postgres' && !(await waitFor(() => service.healthy(), service.startTimeoutMs))) {
      throw failure(service, 'did not answer its health check');
    }
  }
  await Promise.all(
    [...toStart, ...starting].map(async (service) => {
      let healthy = await waitFor(() => service.healthy(), service.startTimeoutMs);
      // A server of ours that runs but stopped answering is restarted once (FerretDB can wedge under load).
      if (!healthy && starting.includes(service) && service.name !== 'postgres') {
        log(`  ${service.name} is running but not answering: restarting it`);
        await service.stop();
        try {
          await service.start(await service.build());
        } catch (error) {
          throw failure(service, `failed to restart: ${(error as Error).message.split('\n')[0]}`);
        }
        healthy = await waitFor(() => service.healthy(), service.startTimeoutMs);
      }
      if (!healthy) throw failure(service, `did not answer its health check within ${service.startTimeoutMs / 1000} s`);
      (service as { confirm?: () => void }).confirm?.();
    }),
  );

  const manifest: StackManifest = {
    temporalAddress: `${config.temporal.host}:${config.temporal.port}`,
    mongoUri: config.mongo.uri,
    elasticsearchUrl: config.elasticsearch.url,
    smtp: config.smtp,
    temporalTestServer: testServerPath,
    embeddingModelDir,
  };
  const witness = services.some((s) => s.name === 'witness') ? recordStackWitness(config) : undefined;
  if (witness) manifest.witness = witness;
  fs.writeFileSync(path.join(config.stateDir, 'stack.json'), JSON.stringify(manifest, null, 2));
  if (quiet && toStart.length === 0 && starting.length === 0) return;
  for (const service of services) {
    const was = states.get(service);
    const note = was === 'external' ? 'already up (not started by us)' : was === 'ours' ? 'already up' : 'started';
    log(`  ${service.name.padEnd(14)} ${service.address}  — ${note}`);
  }
  log(`  ${testServer.name.padEnd(14)} ${testServerPath}`);
  log(`stack up in ${((Date.now() - started) / 1000).toFixed(1)} s (state: ${config.stateDir})`);
}

async function down(config: StackConfig): Promise<void> {
  const { services } = stackServices(config);
  for (const service of [...services].reverse()) {
    const stopped = await service.stop();
    log(`  ${service.name.padEnd(14)} ${stopped ? 'stopped' : 'not running (ours)'}`);
  }
}

async function status(config: StackConfig): Promise<boolean> {
  const { services } = stackServices(config);
  let allUp = true;
  for (const service of services) {
    const s = await state(service);
    if (s !== 'ours' && s !== 'external') allUp = false;
    const pid = service.ownPid();
    const text = {
      ours: `up (pid ${pid})`,
      external: 'up (not started by us)',
      starting: `not answering (pid ${pid}; log ${service.logFile})`,
      down: 'down',
    }[s];
    process.stdout.write(`${service.name.padEnd(14)} ${text.padEnd(28)} ${service.address}\n`);
  }
  return allUp;
}

async function main(): Promise<void> {
  const command = (process.argv[2] ?? 'status') as Command;
  const config = loadStackConfig();
  switch (command) {
    case 'up':
      return withLock(config, () => up(config, false));
    case 'ensure':
      return withLock(config, () => up(config, true));
    case 'down':
      return withLock(config, () => down(config));
    case 'status':
      process.exitCode = (await status(config)) ? 0 : 1;
      return;
    default:
      log(`usage: stack/cli.ts up|down|status|ensure (got "${command}")`);
      process.exitCode = 2;
  }
}

main().catch((error: unknown) => {
  if (error instanceof StackError) log(`stack: ${error.server}: ${error.message}`);
  else log(`stack: ${(error as Error).message}`);
  process.exitCode = 1;
});
