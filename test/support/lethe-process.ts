/**
 * A Lethe entry point (`node --import tsx <entry>`) in a process of its own, its output in a log file. Every
 * process started here is SIGKILLed if the test process exits first, so a failed test leaves none behind.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { loadStackConfig } from '../../stack/stack-config.js';

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LetheProcess {
  pid: number;
  /** Where its stdout and stderr go. */
  logFile: string;
  kill(signal?: NodeJS.Signals): void;
  waitExit(): Promise<ProcessExit>;
  /** Whether it has exited, and how. */
  readonly exit: ProcessExit | null;
}

/** Every process this test process started and has not yet seen exit. */
const live = new Set<number>();
let reaperInstalled = false;

function installReaper(): void {
  if (reaperInstalled) return;
  reaperInstalled = true;
  process.on('exit', () => {
    for (const pid of live) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** `entry` is relative to the repository; `env` goes over the test mode's defaults. */
export function spawnLethe(entry: string, name: string, env: Record<string, string>): LetheProcess {
  installReaper();
  const repoDir = loadStackConfig().repoDir;
  const logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), `lethe-${name}-`)), `${name}.log`);
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoDir, entry)], {
    cwd: repoDir,
    env: { ...process.env, LETHE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name} process: spawn failed`);
  live.add(pid);
  let exit: ProcessExit | null = null;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(pid);
      exit = { code, signal };
      resolve(exit);
    });
  });
  return {
    pid,
    logFile,
    get exit() {
      return exit;
    },
    kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (exit) return;
      try {
        process.kill(pid, signal);
      } catch {
        // exited in between
      }
    },
    waitExit: () => exited,
  };
}

/** The end of a process's log, for failure messages. */
export function tail(file: string, bytes = 4000): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '(no log)';
  }
}
