/**
 * Faults injected into the local stack's own servers: a pause (SIGSTOP, later SIGCONT: the process keeps its
 * sockets, every request to it hangs), a stop (the server's own shutdown) or a kill (SIGKILL to it and its children:
 * no shutdown, whatever was in flight lost), and a restart through the stack's own start functions, so the server
 * comes back on the same port over the same data directory. Only servers the stack started are touched (never one
 * someone else runs on the port).
 */
import fs from 'node:fs';
import { loadStackConfig } from '../../stack/stack-config.js';
import { stackServices, type StackService } from '../../stack/services.js';
import { waitFor } from '../../stack/processes.js';

/**
 * The servers an erasure depends on, as the stack names them: the two stores (FerretDB and the PostgreSQL that
 * holds its data, Elasticsearch), Temporal's dev server, the SMTP server notifications go to, and the KMS that holds
 * the key-encryption keys.
 */
export type FaultyServer = 'elasticsearch' | 'ferretdb' | 'postgres' | 'temporal' | 'smtp' | 'kms';

/** One server of the local stack, with the faults a reliability test can inject into it. */
export interface ServerUnderTest {
  readonly name: FaultyServer;
  /** The pid of the running server (throws when the stack did not start it: no fault can be injected). */
  pid(): number;
  /** Stops the server and every process it started (PostgreSQL serves each connection from a child). */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
  /** SIGKILL to the server and its children, without a shutdown; resolves once they are gone. */
  kill(): Promise<void>;
  /** Starts it with the stack's own start function and waits until it answers its health check. */
  start(): Promise<void>;
  healthy(): Promise<boolean>;
  /** Whatever was done to it: resumed, started again if it is not running, and answering. Idempotent. */
  heal(): Promise<void>;
}

type ConfirmableService = StackService & { confirm?: () => void };

/** The one-letter state of a process from /proc (`T` when stopped by a signal), or undefined once it is gone. */
export function processState(pid: number): string | undefined {
  try {
    // The command name in parentheses may hold spaces: the state is the first field after the last ')'.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** The process and its children (one level: PostgreSQL's backends and workers are the postmaster's children). */
function withChildren(pid: number): number[] {
  try {
    const children = fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(' ')
      .filter(Boolean)
      .map(Number);
    return [pid, ...children];
  } catch {
    return [pid];
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

export function serverUnderTest(name: FaultyServer): ServerUnderTest {
  const { services } = stackServices(loadStackConfig());
  const service = services.find((s) => s.name === name) as ConfirmableService | undefined;
  if (!service) throw new Error(`the stack manages no ${name} (LETHE_STACK_SERVICES?)`);
  /** The pids last paused, so that they are resumed even if the pid file changes in between. */
  let paused: number[] = [];

  const pid = () => {
    const own = service.ownPid();
    if (own === undefined) {
      throw new Error(
        `${name} is not a server the stack started (npm run stack:status): no fault can be injected into it`,
      );
    }
    return own;
  };
  const waitHealthy = async (what: string) => {
    if (!(await waitFor(() => service.healthy().catch(() => false), service.startTimeoutMs, 500))) {
      throw new Error(
        `${name} did not answer its health check within ${service.startTimeoutMs / 1000} s after ${what} (log: ${service.logFile})`,
      );
    }
  };

  const server: ServerUnderTest = {
    name,
    pid,
    async pause() {
      const targets = withChildren(pid());
      // The parent first, so that it starts no new child while its children are being stopped.
      for (const target of targets) signal(target, 'SIGSTOP');
      paused = targets;
      // The kernel stops a process asynchronously: wait until /proc says so.
      const stopped = () => Promise.resolve(targets.every((t) => [undefined, 'T'].includes(processState(t))));
      if (!(await waitFor(stopped, 5000, 20))) throw new Error(`${name} (pids ${targets.join(' ')}) did not stop`);
    },
    resume() {
      // Children first: a parent resumed before them could find them unresponsive and restart them.
      for (const target of [...paused].reverse()) signal(target, 'SIGCONT');
      paused = [];
    },
    async stop() {
      const target = pid();
      await service.stop();
      if (!(await waitFor(() => Promise.resolve(processState(target) === undefined), 30_000, 50))) {
        throw new Error(`${name} (pid ${target}) is still running after its stop`);
      }
    },
    async kill() {
      const targets = withChildren(pid());
      for (const target of targets) signal(target, 'SIGKILL');
      // Gone means reaped, not only dead: a server's own start (PostgreSQL's lock file check) takes a zombie's pid for
      // a live one.
      const gone = () => Promise.resolve(targets.every((t) => processState(t) === undefined));
      if (!(await waitFor(gone, 30_000, 20))) {
        const left = targets.map((t) => `${t}:${processState(t) ?? 'gone'}`).join(' ');
        throw new Error(`${name} (pids ${left}) not reaped within 30 s of SIGKILL`);
      }
    },
    async start() {
      await service.start(await service.build());
      await waitHealthy('a restart');
      service.confirm?.();
    },
    healthy: () => service.healthy().catch(() => false),
    async heal() {
      // A stopped process cannot act on SIGTERM: resume before anything else.
      server.resume();
      const running = service.ownPid();
      if (running !== undefined) for (const target of withChildren(running)) signal(target, 'SIGCONT');
      if (running === undefined) await server.start();
      else await waitHealthy('resuming it');
    },
  };
  return server;
}
