/**
 * A Lethe API in a process of its own (`node --import tsx app/api/server.main.ts`), as operators run it behind a
 * balancer: a test can stop it with SIGTERM and start it again on the same port, while other processes keep
 * serving.
 */
import { spawnLethe, tail, type ProcessExit } from './lethe-process.js';

export interface ApiProcess {
  pid: number;
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Where its stdout and stderr go. */
  logFile: string;
  kill(signal?: NodeJS.Signals): void;
  waitExit(): Promise<ProcessExit>;
  /** Resolves once `/readyz` answers ready (MongoDB, Elasticsearch and Temporal reachable from it). */
  ready(timeoutMs?: number): Promise<void>;
  readonly exited: boolean;
}

/**
 * `env` goes over the defaults: the test mode (`LETHE_ENV=test`, secrets from the stack's state directory, which
 * every process of the test shares), the port, and the task queue its workflows start on.
 */
export function startApiProcess(options: {
  port: number;
  taskQueue: string;
  tokenSecret: string;
  env?: Record<string, string>;
}): ApiProcess {
  const child = spawnLethe('app/api/server.main.ts', 'api', {
    LETHE_API_HOST: '127.0.0.1',
    LETHE_API_PORT: String(options.port),
    LETHE_TASK_QUEUE: options.taskQueue,
    LETHE_TOKEN_SECRET: options.tokenSecret,
    ...options.env,
  });
  const { pid, logFile } = child;
  const url = `http://127.0.0.1:${options.port}`;
  return {
    pid,
    port: options.port,
    url,
    logFile,
    get exited() {
      return child.exit !== null;
    },
    kill: (signal) => child.kill(signal),
    waitExit: () => child.waitExit(),
    async ready(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exit)
          throw new Error(`api process ${pid} exited (${JSON.stringify(child.exit)}); log:\n${tail(logFile)}`);
        const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) }).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ready) return;
        if (Date.now() > deadline)
          throw new Error(`api process ${pid} is not ready after ${timeoutMs} ms; log:\n${tail(logFile)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
