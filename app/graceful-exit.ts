import type { Logger } from '../src/observability/logger.js';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export interface GracefulExitOptions {
  log: Logger;
  /** How long `stop` may take before the process exits 1 anyway. */
  deadlineMs: number;
  /** Exits the process (tests of this module pass their own). */
  exit?: (code: number) => void;
}

/**
 * On the first SIGTERM or SIGINT, runs `stop` (let work in flight finish, close the clients) and exits 0 once it
 * has. A `stop` that fails or outlives the deadline, or a second signal (an operator who will not wait), exits 1:
 * the process never hangs on a client that does not close.
 */
export function exitGracefully(stop: () => Promise<void>, options: GracefulExitOptions): void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      options.log.warn({ signal }, 'second signal while stopping: exiting now');
      exit(1);
      return;
    }
    stopping = true;
    options.log.info({ signal, deadlineMs: options.deadlineMs }, 'stopping: letting work in flight finish');
    const deadline = setTimeout(() => {
      options.log.error({ deadlineMs: options.deadlineMs }, 'work in flight did not finish before the deadline');
      exit(1);
    }, options.deadlineMs);
    deadline.unref();
    stop().then(
      () => {
        clearTimeout(deadline);
        options.log.info('stopped');
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(deadline);
        options.log.error({ err: (error as Error).message }, 'stopping failed');
        exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}
