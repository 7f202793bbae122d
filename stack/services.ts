import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { Connection } from '@temporalio/client';
import { postgresPlacement, type PostgresPlacement, type StackConfig, type StackWitness } from './stack-config.js';
import {
  StackError,
  commandLine,
  execFileAsync,
  isAlive,
  portOpen,
  readPid,
  runBuildScript,
  spawnDetached,
  terminate,
} from './processes.js';

/** One server of the local stack: how to build it, start it, tell whether it answers, and stop it. */
export interface StackService {
  readonly name: string;
  readonly address: string;
  readonly logFile: string;
  /** Builds or fetches what is missing into the cache; returns the artifact (or nothing). */
  build(): Promise<string | undefined>;
  start(artifact: string | undefined): Promise<void>;
  healthy(): Promise<boolean>;
  /** Our live process, if any: never a process someone else started. */
  ownPid(): number | undefined;
  stop(): Promise<boolean>;
  /** Seconds to wait for health after start. */
  readonly startTimeoutMs: number;
}

/** Search attributes registered on the dev server: ids and states only, never personal data. */
export const SEARCH_ATTRIBUTES = ['LetheTenant', 'LetheRequestId', 'LetheState', 'LetheWorkflowKind'] as const;

abstract class ProcessService implements StackService {
  abstract readonly name: string;
  abstract readonly address: string;
  abstract readonly startTimeoutMs: number;
  constructor(protected readonly config: StackConfig) {}
  get logFile(): string {
    return path.join(this.config.stateDir, 'logs', `${this.name}.log`);
  }
  get pidFile(): string {
    return path.join(this.config.stateDir, 'pids', `${this.name}.pid`);
  }
  abstract build(): Promise<string | undefined>;
  abstract start(artifact: string | undefined): Promise<void>;
  abstract healthy(): Promise<boolean>;

  ownPid(): number | undefined {
    const pid = readPid(this.pidFile);
    if (pid === undefined || !isAlive(pid)) return undefined;
    const recorded = this.recordedCommand();
    // A recorded command line that no longer matches means the pid was recycled by another program.
    if (recorded !== undefined && recorded !== commandLine(pid)) return undefined;
    return pid;
  }

  /** Called once the server answers: pins the pid to the program now running under it. */
  confirm(): void {
    const pid = readPid(this.pidFile);
    if (pid !== undefined) fs.writeFileSync(this.pidFile, `${pid}\n${commandLine(pid)}\n`);
  }

  private recordedCommand(): string | undefined {
    try {
      const lines = fs.readFileSync(this.pidFile, 'utf8').split('\n');
      return lines[1] ? lines[1] : undefined;
    } catch {
      return undefined;
    }
  }

  async stop(): Promise<boolean> {
    const pid = this.ownPid();
    fs.rmSync(this.pidFile, { force: true });
    if (pid === undefined) return false;
    await terminate(pid);
    return true;
  }

  protected spawn(command: string, args: string[], env?: NodeJS.ProcessEnv): void {
    this.markLogStart();
    spawnDetached({ command, args, logFile: this.logFile, pidFile: this.pidFile, env, cwd: this.config.stateDir });
  }

  protected markLogStart(): void {
    fs.mkdirSync(path.dirname(this.logFile), { recursive: true });
    fs.appendFileSync(this.logFile, `\n--- start ${new Date().toISOString()}\n`);
  }

  protected script(relative: string): string {
    return path.join(this.config.repoDir, 'stack', relative);
  }

  protected buildEnv(): NodeJS.ProcessEnv {
    return { LETHE_CACHE_DIR: this.config.cacheDir };
  }
}

class TemporalService extends ProcessService {
  readonly name = 'temporal';
  readonly startTimeoutMs = 60_000;
  get address(): string {
    return `${this.config.temporal.host}:${this.config.temporal.port}`;
  }
  build(): Promise<string> {
    return runBuildScript(this.name, this.script('temporal/build-cli.sh'), this.buildEnv());
  }
  async start(binary: string): Promise<void> {
    const dir = path.join(this.config.stateDir, 'temporal');
    fs.mkdirSync(dir, { recursive: true });
    const args = [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      this.config.temporal.host,
      '--port',
      String(this.config.temporal.port),
      '--db-filename',
      path.join(dir, 'temporal.db'),
      '--log-level',
      'warn',
      // One history shard: each dispatch waits on a 20/s token bucket unless these are raised (STACK.md).
      '--dynamic-config-value',
      'history.transferProcessorMaxPollRPS=1000',
      '--dynamic-config-value',
      'history.timerProcessorMaxPollRPS=1000',
      // Without this, each SQLite commit's fsync becomes the bottleneck once the limits above are raised.
      // A development server's history may be lost on an OS crash; that is acceptable here.
      '--sqlite-pragma',
      'synchronous=OFF',
      ...SEARCH_ATTRIBUTES.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
    ];
    this.spawn(binary, args);
  }
  async healthy(): Promise<boolean> {
    if (!(await portOpen(this.config.temporal.host, this.config.temporal.port))) return false;
    const connection = await Connection.connect({ address: this.address, connectTimeout: 2000 });
    try {
      const response = await connection.healthService.check({});
      return response.status === 1; // SERVING
    } finally {
      await connection.close();
    }
  }
}

/** Not a running server: the time-skipping test server is started per test environment by the SDK. */
class TemporalTestServerArtifact implements StackService {
  readonly name = 'temporal-test-server';
  readonly address = '(started per test by the SDK)';
  readonly startTimeoutMs = 0;
  constructor(private readonly config: StackConfig) {}
  get logFile(): string {
    return path.join(this.config.stateDir, 'logs', `${this.name}.log`);
  }
  build(): Promise<string> {
    return runBuildScript(this.name, path.join(this.config.repoDir, 'stack', 'temporal', 'build-test-server.sh'), {
      LETHE_CACHE_DIR: this.config.cacheDir,
    });
  }
  async start(): Promise<void> {}
  async healthy(): Promise<boolean> {
    return true;
  }
  ownPid(): undefined {
    return undefined;
  }
  async stop(): Promise<boolean> {
    return false;
  }
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Runs a command as the `postgres` user from `/` (the caller's directory may be one that user cannot enter). */
function asPostgres(args: string[], output: number | 'pipe' = 'pipe'): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('runuser', ['-u', 'postgres', '--', ...args], { cwd: '/', stdio: ['ignore', output, output] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.resume();
    child.once('error', reject);
    child.once('close', (code) => {
      const what = `${path.basename(args[0]!)} ${args.at(-1)}`;
      if (code === 0) resolve();
      else reject(new Error(`${what} exited with ${code}${stderr ? `: ${stderr.trim()}` : ''}`));
    });
  });
}

/**
 * The directory under /var/tmp that holds the cluster (see `postgresPlacement`): made by us, for this state
 * directory, and never taken over from someone else (it sits in a world-writable place with a predictable name).
 */
function makePostgresHome(home: string, stateDir: string): void {
  try {
    fs.mkdirSync(home, { mode: 0o755 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stat = fs.lstatSync(home);
  if (!stat.isDirectory()) {
    throw new Error(`${home} exists and is not a directory; remove it or choose another LETHE_STATE_DIR`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new Error(`${home} belongs to uid ${stat.uid}, not to this user; refusing to keep PostgreSQL's data there`);
  }
  fs.chmodSync(home, 0o755);
  // For whoever finds the directory: which state directory (and so which checkout) it belongs to.
  fs.writeFileSync(path.join(home, 'state-dir'), `${stateDir}\n`);
}

/** `<state>/postgres/data` → the cluster, unless something other than a link is already there. */
function linkDataDir(link: string, dataDir: string): void {
  fs.mkdirSync(path.dirname(link), { recursive: true });
  let current: string | undefined;
  try {
    current = fs.readlinkSync(link);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EINVAL') return; // a real file or directory: not ours to replace
    if (code !== 'ENOENT') throw error;
  }
  if (current === dataDir) return;
  if (current !== undefined) fs.rmSync(link, { force: true });
  fs.symlinkSync(dataDir, link);
}

class PostgresService extends ProcessService {
  readonly name = 'postgres';
  readonly startTimeoutMs = 30_000;
  get address(): string {
    return `127.0.0.1:${this.config.postgres.port} (FerretDB backend; data in ${this.dataDir})`;
  }
  get placement(): PostgresPlacement {
    return postgresPlacement(this.config.stateDir);
  }
  get dataDir(): string {
    return this.placement.dataDir;
  }
  override get pidFile(): string {
    return path.join(this.dataDir, 'postmaster.pid');
  }
  async build(): Promise<undefined> {
    if (!fs.existsSync(path.join(PG_BIN, 'pg_ctl'))) {
      throw new StackError(this.name, `PostgreSQL 15 is not installed (${PG_BIN}); apt-get install postgresql-15`);
    }
    return undefined;
  }
  async start(): Promise<void> {
    const { dataDir, home, link } = this.placement;
    if (home) makePostgresHome(home, this.config.stateDir);
    try {
      await execFileAsync('bash', [this.script('postgres/prepare.sh'), dataDir, String(this.config.postgres.port)], {
        cwd: '/',
      });
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
      throw new Error(stderr.split('\n').pop() || (error as Error).message);
    }
    if (home) linkDataDir(link, dataDir);
    // The log stays in the state directory, which `postgres` may not enter: the server writes to a descriptor
    // opened here (pg_ctl without -l hands its own output to the server).
    this.markLogStart();
    const log = fs.openSync(this.logFile, 'a');
    try {
      await asPostgres([path.join(PG_BIN, 'pg_ctl'), '-D', dataDir, '-w', '-t', '60', 'start'], log);
    } finally {
      fs.closeSync(log);
    }
  }
  async healthy(): Promise<boolean> {
    if (this.ownPid() === undefined) return false;
    const { stdout } = await execFileAsync(path.join(PG_BIN, 'pg_isready'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.config.postgres.port),
    ]).catch(() => ({ stdout: '' }));
    return stdout.includes('accepting connections');
  }
  // postmaster.pid is PostgreSQL's own and is removed by it on shutdown.
  override ownPid(): number | undefined {
    const pid = readPid(this.pidFile);
    return pid !== undefined && isAlive(pid) && commandLine(pid).includes('postgres') ? pid : undefined;
  }
  override confirm(): void {}
  override async stop(): Promise<boolean> {
    if (this.ownPid() === undefined) return false;
    await asPostgres([path.join(PG_BIN, 'pg_ctl'), '-D', this.dataDir, '-m', 'fast', '-w', 'stop']);
    return true;
  }
}

class FerretDbService extends ProcessService {
  readonly name = 'ferretdb';
  readonly startTimeoutMs = 30_000;
  get address(): string {
    return `${this.config.mongo.host}:${this.config.mongo.port} (MONGODB_URI=${this.config.mongo.uri})`;
  }
  build(): Promise<string> {
    return runBuildScript(this.name, this.script('ferretdb/build.sh'), this.buildEnv());
  }
  async start(binary: string): Promise<void> {
    // Idempotent: the database, plan_cache_mode and the GIN companion-index event trigger.
    await execFileAsync('bash', [
      this.script('postgres/bootstrap.sh'),
      String(this.config.postgres.port),
      postgresPlacement(this.config.stateDir).dataDir,
    ]);
    this.spawn(binary, [
      '--listen-addr',
      `${this.config.mongo.host}:${this.config.mongo.port}`,
      '--postgresql-url',
      `postgres://postgres@127.0.0.1:${this.config.postgres.port}/ferretdb`,
      // FerretDB's error lines quote the failing query's arguments (document prefixes): with them on, a
      // duplicate-key insert would copy memory content into the log. Only start-up and fatal errors remain.
      '--log-level',
      'ERROR+4',
    ]);
  }
  async healthy(): Promise<boolean> {
    if (!(await portOpen(this.config.mongo.host, this.config.mongo.port))) return false;
    // Every wait is bounded: a FerretDB that accepts connections but stopped answering (seen under heavy
    // concurrent load) must read as unhealthy, not hang the caller.
    const client = new MongoClient(this.config.mongo.uri, {
      serverSelectionTimeoutMS: 2000,
      connectTimeoutMS: 2000,
      socketTimeoutMS: 3000,
    });
    const answer = (async () => {
      await client.connect();
      const result = await client.db('admin').command({ ping: 1 });
      return result.ok === 1;
    })();
    try {
      return await Promise.race([
        answer,
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000).unref()),
      ]);
    } finally {
      answer.catch(() => undefined);
      void client.close(true).catch(() => undefined);
    }
  }
}

class ElasticsearchService extends ProcessService {
  readonly name = 'elasticsearch';
  readonly startTimeoutMs = 120_000;
  get address(): string {
    return this.config.elasticsearch.url;
  }
  build(): Promise<string> {
    return runBuildScript(this.name, this.script('elasticsearch/build.sh'), this.buildEnv());
  }
  async start(runScript: string): Promise<void> {
    const home = path.join(this.config.stateDir, 'elasticsearch');
    fs.mkdirSync(home, { recursive: true });
    this.spawn(runScript, ['--home', home, '--http-port', String(this.config.elasticsearch.port)]);
  }
  async healthy(): Promise<boolean> {
    const response = await fetch(new URL('/_cluster/health', this.config.elasticsearch.url), {
      signal: AbortSignal.timeout(2000),
    });
    if (!response.ok) return false;
    const body = (await response.json()) as { status?: string };
    return body.status === 'green' || body.status === 'yellow';
  }
}

class SmtpCaptureService extends ProcessService {
  readonly name = 'smtp';
  readonly startTimeoutMs = 20_000;
  get address(): string {
    return `${this.config.smtp.host}:${this.config.smtp.port} (captured mail in ${this.config.smtp.captureDir})`;
  }
  async build(): Promise<undefined> {
    return undefined;
  }
  async start(): Promise<void> {
    this.spawn(process.execPath, [
      '--import',
      'tsx',
      this.script('smtp/capture-server.ts'),
      '--host',
      this.config.smtp.host,
      '--port',
      String(this.config.smtp.port),
      '--dir',
      this.config.smtp.captureDir,
    ]);
  }
  async healthy(): Promise<boolean> {
    return portOpen(this.config.smtp.host, this.config.smtp.port);
  }
  protected override spawn(command: string, args: string[]): void {
    // tsx must resolve from the repository, not from the state directory.
    this.markLogStart();
    spawnDetached({ command, args, logFile: this.logFile, pidFile: this.pidFile, cwd: this.config.repoDir });
  }
}

/** An emulator of the AWS KMS API (local-kms), where the aws-kms KEK adapter is tested. */
class KmsEmulatorService extends ProcessService {
  readonly name = 'kms';
  readonly startTimeoutMs = 20_000;
  get address(): string {
    return `${this.config.kms.url} (AWS KMS API emulator; keys in ${path.join(this.config.stateDir, 'kms')})`;
  }
  build(): Promise<string> {
    return runBuildScript(this.name, this.script('kms/build.sh'), this.buildEnv());
  }
  async start(binary: string): Promise<void> {
    this.spawn(binary, [
      '--listen-addr',
      `${this.config.kms.host}:${this.config.kms.port}`,
      '--data-dir',
      path.join(this.config.stateDir, 'kms'),
    ]);
  }
  async healthy(): Promise<boolean> {
    if (!(await portOpen(this.config.kms.host, this.config.kms.port))) return false;
    const response = await fetch(this.config.kms.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'TrentService.ListKeys' },
      body: '{}',
      signal: AbortSignal.timeout(2000),
    });
    return response.ok;
  }
}

/** The stack witness's name, in its cosignature lines and its verifier key. */
export const STACK_WITNESS_NAME = 'lethe.local/stack-witness';

/**
 * An independent C2SP tlog-witness (litewitness, behind a launcher of ours that keeps its key in the state directory
 * and serves it over an in-process ssh-agent socket: see stack/witness/README.md).
 */
class WitnessService extends ProcessService {
  readonly name = 'witness';
  readonly startTimeoutMs = 20_000;
  get address(): string {
    return `${this.config.witness.url} (c2sp.org/tlog-witness; key and database in ${this.config.witness.dir})`;
  }
  build(): Promise<string> {
    return runBuildScript(this.name, this.script('witness/build.sh'), this.buildEnv());
  }
  async start(launcher: string): Promise<void> {
    fs.mkdirSync(this.config.witness.dir, { recursive: true, mode: 0o700 });
    // Where witnessctl is, for the manifest, whichever run of `stack:up` started the witness.
    fs.writeFileSync(path.join(this.config.witness.dir, 'launcher'), `${launcher}\n`);
    this.spawn(launcher, [
      '-dir',
      this.config.witness.dir,
      '-listen',
      `${this.config.witness.host}:${this.config.witness.port}`,
      '-name',
      STACK_WITNESS_NAME,
    ]);
  }
  async healthy(): Promise<boolean> {
    if (!(await portOpen(this.config.witness.host, this.config.witness.port))) return false;
    const response = await fetch(this.config.witness.url, { signal: AbortSignal.timeout(2000) });
    return response.ok && fs.existsSync(path.join(this.config.witness.dir, 'witness.vkey'));
  }
}

/**
 * Writes `<dir>/witness.json`, what a development or test configuration needs to submit to the stack's witness (read
 * by `load-config.ts`): beside the witness rather than only in `stack.json`, which any checkout's `stack:up` rewrites.
 */
export function recordStackWitness(config: StackConfig): StackWitness | undefined {
  const witness = stackWitness(config);
  if (!witness) return undefined;
  const file = path.join(config.witness.dir, 'witness.json');
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(witness, null, 2));
  fs.renameSync(`${file}.tmp`, file);
  return witness;
}

/** The running stack witness as tests and a development configuration reach it; undefined until it has started. */
export function stackWitness(config: StackConfig): StackWitness | undefined {
  const read = (file: string) => {
    try {
      return fs.readFileSync(path.join(config.witness.dir, file), 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const verifierKey = read('witness.vkey');
  const launcher = read('launcher');
  if (!verifierKey || !launcher) return undefined;
  return {
    name: STACK_WITNESS_NAME,
    url: config.witness.url,
    verifierKey,
    db: path.join(config.witness.dir, 'litewitness.db'),
    witnessctl: path.join(path.dirname(launcher), 'witnessctl'),
  };
}

export function stackServices(config: StackConfig): {
  postgres: PostgresService;
  services: StackService[];
  testServer: StackService;
} {
  const postgres = new PostgresService(config);
  const all: StackService[] = [
    new TemporalService(config),
    postgres,
    new FerretDbService(config),
    new ElasticsearchService(config),
    new SmtpCaptureService(config),
    new KmsEmulatorService(config),
    new WitnessService(config),
  ];
  const only = config.only;
  // FerretDB cannot run without its PostgreSQL.
  const wanted = only ? new Set([...only, ...(only.includes('ferretdb') ? ['postgres'] : [])]) : undefined;
  return {
    postgres,
    services: wanted ? all.filter((s) => wanted.has(s.name)) : all,
    testServer: new TemporalTestServerArtifact(config),
  };
}

export { ProcessService };
