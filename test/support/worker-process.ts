/**
 * A Lethe worker in a process of its own (`node --import tsx app/worker/worker.main.ts`), so that a test can
 * SIGKILL it mid-activity the way a crash or an OOM kill would, and start another in its place.
 */
import type { Client } from '@temporalio/client';
import { spawnLethe, tail, type ProcessExit } from './lethe-process.js';

export { tail };
export type WorkerExit = ProcessExit;

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

export function startWorkerProcess(options: { taskQueue: string; env?: Record<string, string> }): WorkerProcess {
  const child = spawnLethe('app/worker/worker.main.ts', 'worker', {
    LETHE_TASK_QUEUE: options.taskQueue,
    ...options.env,
  });
  const { pid, logFile } = child;
  return {
    pid,
    taskQueue: options.taskQueue,
    logFile,
    get exited() {
      return child.exit !== null;
    },
    kill: (signal) => child.kill(signal),
    waitExit: () => child.waitExit(),
    async ready(client, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      const identity = `${pid}@`;
      for (;;) {
        if (child.exit)
          throw new Error(
            `worker process ${pid} exited (${JSON.stringify(child.exit)}) before polling; log:\n${tail(logFile)}`,
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
