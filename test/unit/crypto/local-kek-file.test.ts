import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { KekEpochGone } from '../../../src/substrate/crypto/key-encryption-keys.port.js';
import { createLocalKekFile, ensureLocalKekFile } from '../../../src/substrate/crypto/local-kek-file.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-kek-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('key-encryption keys in a local file, by epoch', () => {
  it('unwraps what it wrapped, only with the same context', async () => {
    const file = path.join(dir, 'a.json');
    ensureLocalKekFile(file);
    const keks = createLocalKekFile(file);
    const dataKey = randomBytes(32);
    const { epoch, wrapped } = await keks.wrap(dataKey, 'data-key|t1|mem_1');
    expect(epoch).toBe(1);
    expect((await keks.unwrap(epoch, wrapped, 'data-key|t1|mem_1')).equals(dataKey)).toBe(true);
    await expect(keks.unwrap(epoch, wrapped, 'data-key|t1|mem_2')).rejects.toThrow();
  });

  it('wraps under a new epoch once begun, and a destroyed epoch unwraps nothing, in another process’s view too', async () => {
    const file = path.join(dir, 'b.json');
    ensureLocalKekFile(file);
    const rotator = createLocalKekFile(file);
    const reader = createLocalKekFile(file);
    const dataKey = randomBytes(32);
    const old = await reader.wrap(dataKey, 'c');
    expect(await rotator.beginEpoch()).toBe(2);
    expect((await reader.wrap(dataKey, 'c')).epoch).toBe(2);
    await expect(rotator.destroyEpoch(2)).rejects.toThrow(/current/);
    await rotator.destroyEpoch(1);
    await rotator.destroyEpoch(1);
    await expect(reader.unwrap(old.epoch, old.wrapped, 'c')).rejects.toBeInstanceOf(KekEpochGone);
    const epochs = await reader.epochs();
    expect(epochs.map((e) => [e.epoch, e.destroyedAt !== null])).toEqual([
      [1, true],
      [2, false],
    ]);
    // The key material is gone from the file, not only marked.
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as { epochs: { epoch: number; key: string | null }[] };
    expect(stored.epochs.find((e) => e.epoch === 1)!.key).toBeNull();
  });

  it('keeps an existing file as it is, and names the variable when the file is missing', async () => {
    const file = path.join(dir, 'c.json');
    ensureLocalKekFile(file);
    const before = fs.readFileSync(file, 'utf8');
    ensureLocalKekFile(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    await expect(createLocalKekFile(path.join(dir, 'missing.json')).epochs()).rejects.toThrow(/^LETHE_KEK_FILE: /);
  });
});
