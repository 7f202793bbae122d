/**
 * Adds a log to a litewitness this host administers, with its `witnessctl` on its SQLite database (safe while the
 * witness runs). The tlog-witness protocol has no way to enrol a log over HTTP, so a remote witness's operator adds
 * the log instead (see docs/verifiable-log.md).
 *
 * Idempotent, and one process at a time (a lock file beside the database): `add-key` stores a second copy of a key it
 * already has, and litewitness then finds two verifiers for one key and refuses every checkpoint of the log. So the
 * log and the key are added only when `list-logs` does not show them, and a key listed twice is put back once.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { LogEnrolment } from './witness.port.js';

const run = promisify(execFile);
const TIMEOUT_MS = 10_000;
const LOCK_WAIT_MS = 30_000;

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
  const enrol = async (origin: string, verifierKey: string) => {
    let log = await listed(origin);
    if (!log) {
      await ctl('add-log', '-origin', origin);
      log = await listed(origin);
      if (!log) throw new Error('witnessctl: the log could not be added');
    }
    const copies = log.keys.filter((k) => k === verifierKey).length;
    if (copies > 1) await ctl('del-key', '-origin', origin, '-key', verifierKey);
    if (copies !== 1) await ctl('add-key', '-origin', origin, '-key', verifierKey);
  };
  return {
    enrol: (origin, verifierKey) => withLock(`${opts.db}.enrol.lock`, () => enrol(origin, verifierKey)),
  };
}

/** Runs `fn` holding an exclusive lock file (its holder's pid inside); a lock whose holder died is taken over. */
async function withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!holderAlive(file)) fs.rmSync(file, { force: true });
      else if (Date.now() > deadline) throw new Error('witnessctl: the enrolment lock is held too long');
      else await sleep(20 + Math.random() * 30);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

function holderAlive(file: string): boolean {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return true; // removed just now: look again
  }
  if (text === '') return true; // created, its pid not written yet
  const pid = Number(text);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
