/**
 * Faults injected into the local stack's own stores: a pause (SIGSTOP, later SIGCONT: the process keeps its
 * sockets, every request to it hangs) or a stop and a restart through the stack's own start functions, so the
 * server comes back on the same port over the same data directory. Only servers the stack started are touched
 * (never one someone else runs on the port).
 */
import fs from 'node:fs';
import { loadStackConfig } from '../../stack/stack-config.js';
import { stackServices, type StackService } from '../../stack/services.js';
import { waitFor } from '../../stack/processes.js';

/** The stores an erasure writes to, as the stack names their servers. */
export type FaultyStore = 'elasticsearch' | 'ferretdb';

/** One store of the local stack, with the faults a reliability test can inject into it. */
export interface StoreUnderTest {
  readonly name: FaultyStore;
  /** The pid of the running server (throws when the stack did not start it: no fault can be injected). */
  pid(): number;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
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

export function storeUnderTest(name: FaultyStore): StoreUnderTest {
  const { services } = stackServices(loadStackConfig());
  const service = services.find((s) => s.name === name) as ConfirmableService | undefined;
  if (!service) throw new Error(`the stack manages no ${name} (LETHE_STACK_SERVICES?)`);
  /** The pid last paused, so that it is resumed even if the pid file changes in between. */
  let paused: number | undefined;

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
    if (!(await waitFor(() => service.healthy(), service.startTimeoutMs, 500))) {
      throw new Error(
        `${name} did not answer its health check within ${service.startTimeoutMs / 1000} s after ${what} (log: ${service.logFile})`,
      );
    }
  };

  const store: StoreUnderTest = {
    name,
    pid,
    pause() {
      const target = pid();
      process.kill(target, 'SIGSTOP');
      paused = target;
    },
    resume() {
      const target = paused ?? service.ownPid();
      paused = undefined;
      if (target !== undefined && processState(target) !== undefined) process.kill(target, 'SIGCONT');
    },
    async stop() {
      pid();
      await service.stop();
    },
    async start() {
      await service.start(await service.build());
      await waitHealthy('a restart');
      service.confirm?.();
    },
    healthy: () => service.healthy().catch(() => false),
    async heal() {
      // A stopped process cannot act on SIGTERM: resume before anything else.
      store.resume();
      const running = service.ownPid();
      if (running !== undefined && processState(running) === 'T') process.kill(running, 'SIGCONT');
      if (running === undefined) await store.start();
      else await waitHealthy('resuming it');
    },
  };
  return store;
}
