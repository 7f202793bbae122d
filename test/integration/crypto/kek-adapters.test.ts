/**
 * The KEK port's promises, kept by each adapter: the local keyring file, and AWS KMS through the AWS SDK against a
 * local emulator of its API (local-kms, built and started by the stack). Each adapter gets a keyring of its own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { KekEpochGone, type KeyEncryptionKeys } from '../../../src/substrate/crypto/key-encryption-keys.port.js';
import { createLocalKekFile, ensureLocalKekFile } from '../../../src/substrate/crypto/local-kek-file.js';
import { createAwsKmsKeks } from '../../../src/substrate/crypto/aws-kms-keks.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-kek-adapters-'));
const opened: { close?(): void }[] = [];
afterAll(() => {
  for (const keks of opened) keks.close?.();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Two handles on one keyring, as two processes would hold it. */
type Keyring = () => { rotator: KeyEncryptionKeys; reader: KeyEncryptionKeys };

const adapters: [string, Keyring][] = [
  [
    'local-file',
    () => {
      const file = path.join(dir, `${randomUUID()}.json`);
      ensureLocalKekFile(file);
      return { rotator: createLocalKekFile(file), reader: createLocalKekFile(file) };
    },
  ],
  [
    'aws-kms',
    () => {
      const options = {
        region: 'eu-west-1',
        endpoint: loadStackConfig().kms.url,
        aliasPrefix: `alias/lethe-test-${randomUUID().slice(0, 8)}`,
        deletionWindowDays: 7,
        createFirstEpoch: true,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      };
      const pair = { rotator: createAwsKmsKeks(options), reader: createAwsKmsKeks(options) };
      opened.push(pair.rotator, pair.reader);
      return pair;
    },
  ],
];

/** Waits, bounded by the test's timeout, until `read` gives what `done` accepts. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.each(adapters)('key-encryption keys in %s', (kind, keyring) => {
  it('names its kind, and unwraps what it wrapped only with the same context', async () => {
    const { rotator: keks } = keyring();
    expect(keks.kind).toBe(kind);
    const dataKey = randomBytes(32);
    const { epoch, wrapped } = await keks.wrap(dataKey, 'data-key|t1|mem_1');
    expect(epoch).toBe(1);
    expect(wrapped).not.toContain(dataKey.toString('base64url'));
    expect((await keks.unwrap(epoch, wrapped, 'data-key|t1|mem_1')).equals(dataKey)).toBe(true);
    await expect(keks.unwrap(epoch, wrapped, 'data-key|t1|mem_2')).rejects.toThrow();
    await expect(keks.unwrap(7, wrapped, 'data-key|t1|mem_1')).rejects.toBeInstanceOf(KekEpochGone);
  });

  it('wraps under a new epoch once begun, and a destroyed epoch unwraps nothing, in another process’s view too', async () => {
    const { rotator, reader } = keyring();
    const dataKey = randomBytes(32);
    const old = await reader.wrap(dataKey, 'c');
    expect(old.epoch).toBe(1);
    expect(await rotator.beginEpoch()).toBe(2);
    // The other process wraps under the new epoch at its next look at the keyring.
    const fresh = await eventually(
      () => reader.wrap(dataKey, 'c'),
      (w) => w.epoch === 2,
    );
    // Until it is destroyed, the old epoch still unwraps what it wrapped: a rotation loses nothing.
    expect((await reader.unwrap(old.epoch, old.wrapped, 'c')).equals(dataKey)).toBe(true);
    await expect(rotator.destroyEpoch(2)).rejects.toThrow(/current/);
    await rotator.destroyEpoch(1);
    await rotator.destroyEpoch(1);
    await expect(reader.unwrap(old.epoch, old.wrapped, 'c')).rejects.toBeInstanceOf(KekEpochGone);
    expect((await reader.unwrap(fresh.epoch, fresh.wrapped, 'c')).equals(dataKey)).toBe(true);
    const epochs = await reader.epochs();
    expect(epochs.map((e) => [e.epoch, e.destroyedAt !== null])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(epochs[0]!.destroyedAt!.getTime()).toBeGreaterThanOrEqual(epochs[0]!.createdAt.getTime());
    if (kind === 'aws-kms') {
      // The KMS keeps the disabled material for its waiting period, and says until when.
      const window = epochs[0]!.materialDeletedBy!.getTime() - epochs[0]!.destroyedAt!.getTime();
      expect(window).toBeGreaterThan(6 * 86_400_000);
      expect(window).toBeLessThanOrEqual(7 * 86_400_000 + 60_000);
    }
  });

  it('loses no key when two processes begin an epoch at once: what each wraps, the other unwraps', async () => {
    const { rotator, reader } = keyring();
    await rotator.wrap(randomBytes(32), 'c');
    const begun = await Promise.all([rotator.beginEpoch(), reader.beginEpoch()]);
    const epochs = (await rotator.epochs()).map((e) => e.epoch);
    expect(epochs).toEqual([...new Set(epochs)].sort((x, y) => x - y));
    expect(epochs).toEqual(expect.arrayContaining(begun));
    const dataKey = randomBytes(32);
    for (const [wrapper, opener] of [
      [rotator, reader],
      [reader, rotator],
    ] as const) {
      const { epoch, wrapped } = await wrapper.wrap(dataKey, 'c');
      expect(epoch).toBe(Math.max(...begun));
      expect((await opener.unwrap(epoch, wrapped, 'c')).equals(dataKey)).toBe(true);
    }
  });
});
