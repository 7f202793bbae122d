/** Starting the release's commands as child processes, logging to files, and stopping them by pid. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface Started {
  name: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
}

/** Runs `node bin/<file>` in the release directory, stdout and stderr into `<logDir>/<name>.log`. */
export function startBin(
  releaseDir: string,
  file: string,
  name: string,
  env: Record<string, string>,
  logDir: string,
): Started {
  const logFile = path.join(logDir, `${name}.log`);
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join('bin', file)], {
    cwd: releaseDir,
    env,
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, child, logFile, exited };
}

/** Runs the release's CLI to completion; its stdout, or an error with its stderr. */
export function runCli(releaseDir: string, args: string[], env: Record<string, string>): string {
  const result = spawnSync(process.execPath, [path.join('bin', 'lethe.mjs'), ...args], {
    cwd: releaseDir,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status !== 0)
    throw new Error(`lethe ${args[0]} ${args[1] ?? ''} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/** SIGTERM by pid, then SIGKILL if it has not exited within the grace period. */
export async function stop(started: Started, graceMs = 10_000): Promise<void> {
  const { child } = started;
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  process.kill(child.pid, 'SIGTERM');
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
  if ((await Promise.race([started.exited, timer])) === 'timeout') {
    process.kill(child.pid, 'SIGKILL');
    await started.exited;
  }
}

/** The last lines of a log, for a failure report. */
export function tail(file: string, lines = 30): string {
  if (!fs.existsSync(file)) return '(no log)';
  return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Polls until `probe` returns a value, the process exits, or the deadline passes. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs: number; processes: Started[] },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const dead = options.processes.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
    if (dead) throw new Error(`${dead.name} exited (${dead.child.exitCode ?? dead.child.signalCode}) before ${what}`);
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${options.timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Resident memory of a running process in MiB (Linux /proc), or undefined where that cannot be read. */
export function rssMiB(started: Started): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${started.child.pid}/status`, 'utf8');
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    return kib ? Math.round(Number(kib) / 1024) : undefined;
  } catch {
    return undefined;
  }
}
