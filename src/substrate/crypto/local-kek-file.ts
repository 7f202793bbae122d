import fs from 'node:fs';
import { processAlive } from '../../shared/process-alive.js';
import path from 'node:path';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { KekEpochGone, type KekEpoch, type KeyEncryptionKeys } from './key-encryption-keys.port.js';

/**
 * KEKs in a local JSON file, for development and tests (`LETHE_KEK_FILE`):
 *
 *     { "epochs": [ { "epoch": 1, "key": "<32 bytes, base64url>" | null, "createdAt": "…", "destroyedAt": "…" | null } ] }
 *
 * The last epoch is current. Destroying an epoch rewrites the file without its key (write, fsync, rename). A file on
 * an ordinary filesystem is no secure-deletion medium — its old blocks may survive the rename — which is why
 * production keeps KEKs in a key management service and this file is for development only.
 *
 * Several processes may share the file: each re-reads it when its modification time changes, so an epoch begun or
 * destroyed by one (the rotation command) is seen by the others at their next wrap or unwrap.
 */
interface FileEpoch {
  epoch: number;
  key: string | null;
  createdAt: string;
  destroyedAt: string | null;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

function writeAtomically(file: string, epochs: FileEpoch[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify({ epochs }, null, 2));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/** How long a process waits for another's change of the keyring before it gives up, naming the holder. */
const LOCK_WAIT_MS = 10_000;
/** A lock whose holder wrote no pid (it died between creating and writing it) is stale after this long. */
const LOCK_STALE_MS = 5_000;

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Runs a change of the keyring under a lock file beside it (`<file>.lock`, created exclusively, holding the pid): two
 * processes that begin an epoch at once would otherwise both write the file read before either's change, and the
 * key of the epoch that lost the rename — with every data key wrapped under it — would be gone. A lock left by a
 * process that no longer runs is taken over. Processes on one host only: the file is a development keyring.
 */
function underLock<T>(file: string, change: () => T): T {
  const lock = `${file}.lock`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = fs.openSync(lock, 'wx', 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = NaN;
    let age = 0;
    try {
      holder = Number(fs.readFileSync(lock, 'utf8'));
      age = Date.now() - fs.statSync(lock).mtimeMs;
    } catch {
      continue; // released in between
    }
    const stale = Number.isInteger(holder) && holder > 0 ? !processAlive(holder) : age > LOCK_STALE_MS;
    if (stale) {
      fs.rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`LETHE_KEK_FILE: ${lock} is held by process ${holder} (remove it if that process is gone)`);
    pause(5 + Math.floor(Math.random() * 10));
  }
  try {
    return change();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/** Creates the file with a first epoch when it does not exist (development only: see the config). */
export function ensureLocalKekFile(file: string): void {
  if (fs.existsSync(file)) return;
  underLock(file, () => {
    if (fs.existsSync(file)) return;
    writeAtomically(file, [
      { epoch: 1, key: randomBytes(32).toString('base64url'), createdAt: new Date().toISOString(), destroyedAt: null },
    ]);
  });
}

export function createLocalKekFile(file: string): KeyEncryptionKeys {
  let loaded: { version: string; epochs: FileEpoch[] } | null = null;
  const read = (): FileEpoch[] => {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      throw new Error(`LETHE_KEK_FILE: ${file} does not exist`);
    }
    // A rename gives a new inode: the version changes even when two writes share a modification time.
    const version = `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    if (loaded && loaded.version === version) return loaded.epochs;
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { epochs?: FileEpoch[] };
    if (!Array.isArray(parsed.epochs) || parsed.epochs.length === 0)
      throw new Error(`LETHE_KEK_FILE: ${file} holds no epochs`);
    loaded = { version, epochs: parsed.epochs };
    return parsed.epochs;
  };
  const keyOf = (epoch: number): Buffer => {
    const entry = read().find((e) => e.epoch === epoch);
    if (!entry?.key) throw new KekEpochGone(epoch);
    return Buffer.from(entry.key, 'base64url');
  };
  return {
    kind: 'local-file',
    async wrap(dataKey, context) {
      const epochs = read();
      const current = epochs[epochs.length - 1]!;
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keyOf(current.epoch), nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(dataKey), cipher.final(), cipher.getAuthTag()]);
      return { epoch: current.epoch, wrapped: `${nonce.toString('base64url')}.${body.toString('base64url')}` };
    },
    async unwrap(epoch, wrapped, context) {
      const [nonce, body] = wrapped.split('.').map((part) => Buffer.from(part, 'base64url'));
      if (!nonce || !body || body.length < TAG_BYTES)
        throw new Error(`a data key wrapped under epoch ${epoch} is malformed`);
      const decipher = createDecipheriv('aes-256-gcm', keyOf(epoch), nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
    },
    async epochs(): Promise<KekEpoch[]> {
      return read().map((e) => ({
        epoch: e.epoch,
        createdAt: new Date(e.createdAt),
        destroyedAt: e.destroyedAt ? new Date(e.destroyedAt) : null,
      }));
    },
    async beginEpoch() {
      // Read under the lock: the file as it is now, with whatever another process just added.
      return underLock(file, () => {
        const epochs = read();
        const next = epochs[epochs.length - 1]!.epoch + 1;
        writeAtomically(file, [
          ...epochs,
          {
            epoch: next,
            key: randomBytes(32).toString('base64url'),
            createdAt: new Date().toISOString(),
            destroyedAt: null,
          },
        ]);
        return next;
      });
    },
    async destroyEpoch(epoch) {
      underLock(file, () => {
        const epochs = read();
        if (epochs[epochs.length - 1]!.epoch === epoch)
          throw new Error(`epoch ${epoch} is current: begin another first`);
        const entry = epochs.find((e) => e.epoch === epoch);
        if (!entry || entry.key === null) return;
        writeAtomically(
          file,
          epochs.map((e) => (e.epoch === epoch ? { ...e, key: null, destroyedAt: new Date().toISOString() } : e)),
        );
      });
    },
  };
}
