import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

export const execFileAsync = promisify(execFile);

/** A failure of one server of the stack, with where to look. */
export class StackError extends Error {
  constructor(
    readonly server: string,
    message: string,
    readonly logFile?: string,
  ) {
    super(message);
    this.name = 'StackError';
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readPid(pidFile: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]?.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The command line of a live process, so that a recycled pid is never mistaken for one of ours. */
export function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

export function tail(file: string, lines = 20): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no log yet)';
  }
}

/** Starts a server detached from this process, output appended to its log, pid recorded. */
export function spawnDetached(opts: {
  command: string;
  args: string[];
  logFile: string;
  pidFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}): number {
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  fs.mkdirSync(path.dirname(opts.pidFile), { recursive: true });
  const out = fs.openSync(opts.logFile, 'a');
  const child = spawn(opts.command, opts.args, {
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...process.env, ...opts.env },
    cwd: opts.cwd,
  });
  fs.closeSync(out);
  if (child.pid === undefined) throw new Error(`could not start ${opts.command}`);
  child.unref();
  fs.writeFileSync(opts.pidFile, `${child.pid}\n`);
  return child.pid;
}

export async function terminate(pid: number, graceMs = 15_000): Promise<void> {
  if (!isAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return;
    await sleep(100);
  }
  process.kill(pid, 'SIGKILL');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A local port nothing listens on now: bound once on the system's choice, then closed. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function portOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function waitFor(what: () => Promise<boolean>, timeoutMs: number, intervalMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await what().catch(() => false)) return true;
    await sleep(intervalMs);
  }
  return false;
}

/** Runs a build script; its last stdout line is the artifact path. Progress goes to our stderr. */
export async function runBuildScript(server: string, script: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', (error) => reject(new StackError(server, `build failed to start: ${error.message}`)));
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').pop()?.trim() ?? '';
      if (code !== 0) reject(new StackError(server, `build script ${script} exited with ${code}`));
      else if (!last || !fs.existsSync(last))
        reject(new StackError(server, `build script ${script} printed no artifact`));
      else resolve(last);
    });
  });
}
