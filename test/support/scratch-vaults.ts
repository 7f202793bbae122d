import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { testRuntime } from './harness.js';
import type { Runtime } from '../../app/runtime.js';
import {
  createDataKeyVault,
  DEFAULT_VAULT_TIMING,
  type DataKeyVault,
} from '../../src/substrate/crypto/data-key-vault.js';
import { createLocalKekFile, ensureLocalKekFile } from '../../src/substrate/crypto/local-kek-file.js';

/**
 * A database and a KEK keyring of a test's own, and vaults over them as processes that have just started see them
 * (nothing in memory). Call `open` in `beforeAll` and `close` in `afterAll`.
 */
export function scratchVaults(name: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lethe-${name}-`));
  const file = path.join(dir, 'kek.json');
  const vaults: DataKeyVault[] = [];
  let runtime: Runtime | undefined;
  let db: Db | undefined;
  return {
    open() {
      runtime = testRuntime({ LETHE_KEK_FILE: path.join(dir, 'runtime-kek.json') });
      db = runtime.mongo.db(`lethe_${name.replaceAll('-', '_')}_${randomUUID().slice(0, 8)}`);
      ensureLocalKekFile(file);
      return db;
    },
    /** A vault as a process that has just started sees it; `clock` for one whose time is elsewhere. */
    async freshVault(clock?: () => number) {
      const vault = createDataKeyVault(db!, createLocalKekFile(file), DEFAULT_VAULT_TIMING, clock);
      vaults.push(vault);
      await vault.ensureIndexes();
      return vault;
    },
    async close() {
      for (const vault of vaults) vault.close();
      await db?.dropDatabase().catch(() => undefined);
      await runtime?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
