/**
 * Data keys are read by kind (a key's record id prefix: `mem`, `evt`…), so that reading many memories' keys does not
 * scan the events' keys too. Keys stored before kinds were recorded must still open their records, and a rotation
 * gives them their kind. Real database; a database and a keyring of the test's own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import { testRuntime } from '../../support/harness.js';
import type { Runtime } from '../../../src/app/runtime.js';
import { createDataKeyVault, keyKindOf, type DataKeyVault } from '../../../src/substrate/crypto/data-key-vault.js';
import { createLocalKekFile, ensureLocalKekFile } from '../../../src/substrate/crypto/local-kek-file.js';
import { rotateKeks } from '../../../src/substrate/crypto/kek-rotation.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { SCAN_MIN_IDS } from '../../../src/substrate/mongo/bounded-scan.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-key-kinds-'));

describe('data keys read by kind', () => {
  let runtime: Runtime;
  let db: Db;
  const vaults: DataKeyVault[] = [];
  const tenant = `t-${randomUUID().slice(0, 8)}`;
  const file = path.join(dir, 'kek.json');
  /** A vault as a process that has just started sees it: nothing in memory. */
  const freshVault = async () => {
    const vault = createDataKeyVault(db, createLocalKekFile(file));
    vaults.push(vault);
    await vault.ensureIndexes();
    return vault;
  };

  beforeAll(() => {
    runtime = testRuntime({ LETHE_KEK_FILE: path.join(dir, 'runtime-kek.json') });
    db = runtime.mongo.db(`lethe_key_kinds_${randomUUID().slice(0, 8)}`);
    ensureLocalKekFile(file);
  });
  afterAll(async () => {
    for (const vault of vaults) vault.close();
    await db?.dropDatabase().catch(() => undefined);
    await runtime?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names a key’s kind by its record id’s prefix', () => {
    expect(keyKindOf('mem_0a1b')).toBe('mem');
    expect(keyKindOf('evt_0a1b')).toBe('evt');
    expect(keyKindOf('probe:req_1')).toBe('other');
    expect(keyKindOf('_leading')).toBe('other');
    expect(keyKindOf('averyveryverylongprefix_1')).toBe('other');
  });

  it('opens every key, those stored before kinds were recorded included, and a rotation gives them their kind', async () => {
    const memories = Array.from({ length: SCAN_MIN_IDS + 100 }, () => `mem_${randomUUID().replaceAll('-', '')}`);
    const events = Array.from({ length: 600 }, () => `evt_${randomUUID().replaceAll('-', '')}`);
    const writer = await freshVault();
    const made = new Map([...(await writer.keysFor(tenant, events)), ...(await writer.keysFor(tenant, memories))]);
    const keys = db.collection<{ _id: string; kind?: string }>(Collections.dataKeys);
    // A quarter of the memories' keys as an older version stored them: no kind.
    const legacy = memories.filter((_, n) => n % 4 === 0);
    for (const id of legacy) await keys.updateOne({ _id: id }, { $unset: { kind: '' } });
    expect(await keys.countDocuments({ tenant, kind: 'mem' })).toBe(memories.length - legacy.length);

    const opened = await (await freshVault()).existing(tenant, memories);
    expect(opened.size).toBe(memories.length);
    for (const id of memories) expect(opened.get(id)?.equals(made.get(id)!)).toBe(true);

    const outcome = await rotateKeks(writer, writer.keks, { settleMs: 10 });
    expect(outcome.kept).toEqual([]);
    expect(await keys.countDocuments({ tenant, kind: 'mem' })).toBe(memories.length);
    expect(await keys.countDocuments({ tenant, kind: 'evt' })).toBe(events.length);
    const afterRotation = await (await freshVault()).existing(tenant, [...memories, ...events]);
    expect(afterRotation.size).toBe(memories.length + events.length);
  });
});
