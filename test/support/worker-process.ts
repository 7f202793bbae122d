/**
 * A Lethe worker in a process of its own (`node --import tsx src/temporal/worker.main.ts`), so that a test can
 * SIGKILL it mid-activity the way a crash or an OOM kill would, and start another in its place.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { loadStackConfig } from '../../stack/stack-config.js';

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcess {
  pid: number;
  taskQueue: string;
  /** Where its stdout and stderr go. */
  logFile: string;
  kill(signal?: NodeJS.Signals): void;
  waitExit(): Promise<WorkerExit>;
  /** Resolves once this process polls its task queue (its identity is `<pid>@<host>`). */
  ready(client: Client, timeoutMs?: number): Promise<void>;
  /** Whether it has exited. */
  readonly exited: boolean;
}

/** Every worker process this test process started and has not yet seen exit: killed if the test process dies. */
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

export function startWorkerProcess(options: { taskQueue: string; env?: Record<string, string> }): WorkerProcess {
  installReaper();
  const repoDir = loadStackConfig().repoDir;
  const logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-worker-')), 'worker.log');
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoDir, 'src', 'temporal', 'worker.main.ts')], {
    cwd: repoDir,
    env: {
      ...process.env,
      LETHE_TASK_QUEUE: options.taskQueue,
      LETHE_ENV: 'test',
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error('worker process: spawn failed');
  live.add(pid);
  let exit: WorkerExit | null = null;
  const exited = new Promise<WorkerExit>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(pid);
      exit = { code, signal };
      resolve(exit);
    });
  });

  return {
    pid,
    taskQueue: options.taskQueue,
    logFile,
    get exited() {
      return exit !== null;
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
    async ready(client, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      const identity = `${pid}@`;
      for (;;) {
        if (exit)
          throw new Error(
            `worker process ${pid} exited (${JSON.stringify(exit)}) before polling; log:\n${tail(logFile)}`,
          );
        const described = await client.workflowService.describeTaskQueue({
          namespace: client.options.namespace,
          taskQueue: { name: options.taskQueue },
          taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
        });
        if ((described.pollers ?? []).some((p) => p.identity?.startsWith(identity))) return;
        if (Date.now() > deadline)
          throw new Error(
            `worker process ${pid} is not polling ${options.taskQueue} after ${timeoutMs} ms; log:\n${tail(logFile)}`,
          );
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}

/** The end of a worker's log, for failure messages. */
export function tail(file: string, bytes = 4000): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '(no log)';
  }
}
