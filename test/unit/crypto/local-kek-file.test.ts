import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { KekEpochGone } from '../../../src/substrate/crypto/key-encryption-keys.port.js';
import { createLocalKekFile, ensureLocalKekFile } from '../../../src/substrate/crypto/local-kek-file.js';

const execFileAsync = promisify(execFile);
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

  it('loses no epoch and no key when several processes begin epochs at once', async () => {
    const file = path.join(dir, 'concurrent.json');
    ensureLocalKekFile(file);
    const PROCESSES = 4;
    const EACH = 25;
    const script = fileURLToPath(new URL('../../support/begin-epochs.ts', import.meta.url));
    const outputs = await Promise.all(
      Array.from({ length: PROCESSES }, () =>
        execFileAsync(process.execPath, ['--import', 'tsx', script, file, String(EACH)], { encoding: 'utf8' }),
      ),
    );
    const lines = outputs
      .flatMap((o) => o.stdout.trim().split('\n'))
      .map(
        (line) => JSON.parse(line) as { begun: number; epoch: number; wrapped: string; key: string; context: string },
      );
    expect(lines).toHaveLength(PROCESSES * EACH);
    // Every begin made an epoch of its own, and the file holds them all.
    expect(new Set(lines.map((l) => l.begun)).size).toBe(PROCESSES * EACH);
    const epochs = await createLocalKekFile(file).epochs();
    expect(epochs.map((e) => e.epoch)).toEqual(Array.from({ length: PROCESSES * EACH + 1 }, (_, i) => i + 1));
    // Whatever each process wrapped opens from the file as it ended.
    const reader = createLocalKekFile(file);
    for (const l of lines)
      expect((await reader.unwrap(l.epoch, l.wrapped, l.context)).toString('base64url'), l.context).toBe(l.key);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  }, 120_000);

  it('takes over a lock left by a process that no longer runs', async () => {
    const file = path.join(dir, 'stale.json');
    ensureLocalKekFile(file);
    // A pid no process has: the kernel's maximum is far below it.
    fs.writeFileSync(`${file}.lock`, '2147483646');
    const keks = createLocalKekFile(file);
    expect(await keks.beginEpoch()).toBe(2);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });
});
