/**
 * A KEK rotation racing a write. A writer wraps a new record's data key under the epoch that is current when it
 * reads the keyring, then inserts it; a rotation that began a new epoch in between must neither leave that key under
 * an epoch it destroys (the record would never open again) nor miss it. The writer is held, with its key wrapped
 * under the old epoch and not yet stored, until the rotation reaches a chosen point; then it lands.
 *
 * Each test on a database and a keyring of its own: a rotation re-wraps every key of the vault it runs on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import { testRuntime } from '../../support/harness.js';
import type { Runtime } from '../../../app/runtime.js';
import { createDataKeyVault, type DataKeyVault } from '../../../src/substrate/crypto/data-key-vault.js';
import { createLocalKekFile, ensureLocalKekFile } from '../../../src/substrate/crypto/local-kek-file.js';
import type { KeyEncryptionKeys } from '../../../src/substrate/crypto/key-encryption-keys.port.js';
import { rotateKeks } from '../../../src/substrate/crypto/kek-rotation.js';
import { foundFor, refsOf } from '../../support/vault-refs.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-rotation-races-'));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('a KEK rotation racing a write of a new data key', () => {
  let runtime: Runtime;
  const opened: DataKeyVault[] = [];
  const databases: Db[] = [];
  const tenant = `t-${randomUUID().slice(0, 8)}`;

  beforeAll(() => {
    runtime = testRuntime({ LETHE_KEK_FILE: path.join(dir, 'runtime-kek.json') });
  });
  afterAll(async () => {
    for (const vault of opened) vault.close();
    for (const db of databases) await db.dropDatabase().catch(() => undefined);
    await runtime?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The keyring's KEKs, with a wrap of `held`'s key that waits for `land` once it has wrapped it. */
  function holding(keks: KeyEncryptionKeys, held: string) {
    const wrapped = deferred();
    const land = deferred();
    const gated: KeyEncryptionKeys = {
      kind: keks.kind,
      async wrap(dataKey, context) {
        const out = await keks.wrap(dataKey, context);
        if (context.endsWith(`|${held}`)) {
          wrapped.resolve();
          await land.promise;
        }
        return out;
      },
      unwrap: (epoch, w, context) => keks.unwrap(epoch, w, context),
      epochs: () => keks.epochs(),
      beginEpoch: () => keks.beginEpoch(),
      destroyEpoch: (epoch) => keks.destroyEpoch(epoch),
    };
    return { gated, wrapped, land };
  }

  /** The rotator's vault, letting the held write land (and waiting for it) once its `pass`-th re-wrap pass is done. */
  function landingAfterPass(
    rotator: DataKeyVault,
    pass: number,
    land: { resolve(): void },
    writing: Promise<unknown>,
  ): DataKeyVault {
    let passes = 0;
    return {
      ...rotator,
      async rewrapOlderThan(epoch, onProgress) {
        const moved = await rotator.rewrapOlderThan(epoch, onProgress);
        if (++passes === pass) {
          land.resolve();
          await writing;
        }
        return moved;
      },
    };
  }

  /** A keyring of its own, with a writer's vault whose wrap of `held` waits for `land` after wrapping. */
  async function setUp(held: string) {
    const file = path.join(dir, `${randomUUID()}.json`);
    ensureLocalKekFile(file);
    const keks = createLocalKekFile(file);
    const { gated: writerKeks, wrapped, land } = holding(keks, held);
    const db = runtime.mongo.db(`lethe_rotation_${randomUUID().slice(0, 8)}`);
    databases.push(db);
    const writer = createDataKeyVault(db, writerKeks);
    const rotator = createDataKeyVault(db, keks);
    const reader = () => {
      const vault = createDataKeyVault(db, createLocalKekFile(file));
      opened.push(vault);
      return vault;
    };
    opened.push(writer, rotator);
    await rotator.ensureIndexes();
    // Keys that were there before: the rotation re-wraps them in its first pass.
    const before = await writer.keysFor(
      tenant,
      Array.from({ length: 20 }, () => `mem_${randomUUID().replaceAll('-', '')}`),
    );
    return { keks, db, writer, rotator, reader, wrapped, land, before };
  }

  it('re-wraps a key that lands between the first pass and the second, and destroys the old epoch', async () => {
    const held = `mem_${randomUUID().replaceAll('-', '')}`;
    const { keks, writer, rotator, reader, wrapped, land, before } = await setUp(held);
    const [old] = await keks.epochs();
    const writing = writer.keysFor(tenant, [held]);
    await wrapped.promise;
    const vault = landingAfterPass(rotator, 1, land, writing);
    const outcome = await rotateKeks(vault, keks, { settleMs: 0 });
    expect(outcome.destroyed).toEqual([old!.epoch]);
    expect(outcome.kept).toEqual([]);
    expect(outcome.rewrapped).toBe(before.size + 1);
    // A process that never held it opens the late key, the same bytes the writer sealed with.
    const late = await writing;
    const cold = await reader().existing(tenant, [...refsOf(late), ...refsOf(before)]);
    expect(foundFor(cold, late, held)).toEqual(late.get(held)!.key);
    for (const [id, { key }] of before) expect(foundFor(cold, before, id)).toEqual(key);
  });

  it('keeps the old epoch, and says so, when the key lands after the second pass', async () => {
    const held = `mem_${randomUUID().replaceAll('-', '')}`;
    const { keks, writer, rotator, reader, wrapped, land } = await setUp(held);
    const [old] = await keks.epochs();
    const writing = writer.keysFor(tenant, [held]);
    await wrapped.promise;
    const vault = landingAfterPass(rotator, 2, land, writing);
    const outcome = await rotateKeks(vault, keks, { settleMs: 0 });
    expect(outcome.destroyed).toEqual([]);
    expect(outcome.kept).toEqual([old!.epoch]);
    expect((await keks.epochs()).find((e) => e.epoch === old!.epoch)!.destroyedAt).toBeNull();
    const late = await writing;
    expect(foundFor(await reader().existing(tenant, refsOf(late)), late, held)).toEqual(late.get(held)!.key);

    // The next rotation, with no writer in flight, moves it and destroys both older epochs.
    const next = await rotateKeks(rotator, keks, { settleMs: 0 });
    expect(next.kept).toEqual([]);
    expect(next.destroyed.sort()).toEqual([old!.epoch, outcome.epoch].sort());
    expect(foundFor(await reader().existing(tenant, refsOf(late)), late, held)).toEqual(late.get(held)!.key);
  });

  it('never brings back a key an erasure destroys while the rotation is re-wrapping it', async () => {
    const doomed = `mem_${randomUUID().replaceAll('-', '')}`;
    const { keks, db, writer, reader, before } = await setUp(`never-${randomUUID()}`);
    const doomedKey = await writer.keysFor(tenant, [doomed]);
    // The rotation holds the doomed key between unwrapping it and storing it under the new epoch.
    const { gated, wrapped, land } = holding(keks, doomed);
    const rotator = createDataKeyVault(db, gated);
    opened.push(rotator);
    const rotating = rotateKeks(rotator, keks, { settleMs: 0 });
    await wrapped.promise;
    expect(await writer.destroy(tenant, [doomed])).toBe(1);
    land.resolve();
    const outcome = await rotating;
    expect(outcome.kept).toEqual([]);
    expect(outcome.rewrapped).toBe(before.size);
    const vault = reader();
    expect(await vault.idsWithKeys(tenant, [doomed])).toEqual([]);
    expect((await vault.existing(tenant, refsOf(doomedKey))).size).toBe(0);
    const others = await vault.existing(tenant, refsOf(before));
    expect(others.size).toBe(before.size);
    for (const [id, { key }] of before) expect(foundFor(others, before, id)).toEqual(key);
  });
});
