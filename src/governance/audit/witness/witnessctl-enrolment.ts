/**
 * Adds a log to a litewitness this host administers, with its `witnessctl` on its SQLite database (safe while the
 * witness runs). Idempotent: the log and the key are added only when `list-logs` does not show them, since
 * `add-key` would store a second copy of a key. The tlog-witness protocol has no way to enrol a log over HTTP, so a
 * remote witness's operator adds the log instead (see docs/verifiable-log.md).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { LogEnrolment } from './witness.port.js';

const run = promisify(execFile);
const TIMEOUT_MS = 10_000;

interface ListedLog {
  origin: string;
  keys: (string | null)[];
}

export function createWitnessctlEnrolment(opts: { witnessctl: string; db: string }): LogEnrolment {
  const ctl = (...args: string[]) => run(opts.witnessctl, [...args, '-db', opts.db], { timeout: TIMEOUT_MS });
  const listed = async (origin: string): Promise<ListedLog | undefined> => {
    const { stdout } = await ctl('list-logs');
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ListedLog)
      .find((log) => log.origin === origin);
  };
  // One enrolment at a time in this process: two rounds adding the same log would both see it missing.
  let queue: Promise<unknown> = Promise.resolve();
  const enrol = async (origin: string, verifierKey: string) => {
    let log = await listed(origin);
    if (!log) {
      // Another process may add it between the listing and here: a refusal is fine when the log is there after.
      await ctl('add-log', '-origin', origin).catch(() => undefined);
      log = await listed(origin);
      if (!log) throw new Error('witnessctl: the log could not be added');
    }
    if (!log.keys.includes(verifierKey)) await ctl('add-key', '-origin', origin, '-key', verifierKey);
  };
  return {
    enrol(origin, verifierKey) {
      const next = queue.then(() => enrol(origin, verifierKey));
      queue = next.catch(() => undefined);
      return next;
    },
  };
}
