/**
 * Data keys kept in pages: one document holds the keys of records written together, and an erasure rewrites the page
 * without its records' keys. The local server's updates are not atomic, so every rewrite inserts the page's next
 * generation, and the insert of that generation's id decides between racing writers. These tests race destroys
 * against destroys, against a rotation, and against a writer that stalls for as long as two others take to finish,
 * and check that a destroyed key never comes back: not in the page a reader reads, and not in any copy left behind.
 * Real database; a database and a keyring of the test's own.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collection, Db } from 'mongodb';
import { foundFor, refsOf } from '../../support/vault-refs.js';
import { storeRecordKeys } from '../../support/record-keys.js';
import { scratchVaults } from '../../support/scratch-vaults.js';
import { refKey } from '../../../src/substrate/crypto/data-key-vault.js';
import {
  createKeyPages,
  PAGE_KEYS,
  TOMB_KEEP_MS,
  type KeyPageDoc,
  type KeyPageTomb,
} from '../../../src/substrate/crypto/key-pages.js';
import { createContentCipher } from '../../../src/substrate/crypto/content-cipher.js';
import { isSealed, seal } from '../../../src/substrate/crypto/content-seal.js';
import { rotateKeks } from '../../../src/substrate/crypto/kek-rotation.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

const memId = () => `mem_${randomUUID().replaceAll('-', '')}`;
const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('data keys kept in pages', () => {
  const scratch = scratchVaults('key-pages');
  let db: Db;
  let pagesOf: Collection<KeyPageDoc>;
  const freshVault = (clock?: () => number) => scratch.freshVault(clock);
  /** The tombs of a page's retired generations, as stored. */
  const tombsOf = (page: string) => db.collection<KeyPageTomb>(Collections.dataKeys).find({ tombOf: page }).toArray();
  /** Every stored document (a page's generation, its tomb, an index entry) that names one of the ids. */
  const naming = async (tenant: string, ids: readonly string[]) => {
    const wanted = new Set(ids);
    const docs = await db.collection<{ _id: string }>(Collections.dataKeys).find({ tenant }).toArray();
    return docs.filter((d) => Object.values(d).some((v) => (Array.isArray(v) ? v : [v]).some((x) => wanted.has(x))));
  };
  const newTenant = () => `t-${randomUUID().slice(0, 8)}`;
  /** Every generation of every page of the tenant, as stored. */
  const storedPages = (tenant: string) => pagesOf.find({ tenant, ids: { $exists: true } }).toArray();

  beforeAll(() => {
    db = scratch.open();
    pagesOf = db.collection<KeyPageDoc>(Collections.dataKeys);
  });
  afterAll(() => scratch.close());

  it('keeps the keys of records written together in a few pages, which a cold reader reads instead of a key each', async () => {
    const tenant = newTenant();
    // With ids of the longest a caller may send, in four-byte characters, and odd bytes.
    // (No NUL or other control byte: the API refuses them before any route.)
    const odd = ['😀'.repeat(256), 'evt_a.b$c', 'x'.repeat(256), '"quoted" {json}', 'ключ\\'];
    const ids = [...Array.from({ length: 600 }, memId), ...odd];
    const made = await (await freshVault()).keysFor(tenant, ids);
    const stored = await storedPages(tenant);
    expect(stored.map((p) => p.ids.length).sort((a, b) => b - a)).toEqual([
      PAGE_KEYS,
      PAGE_KEYS,
      ids.length - 2 * PAGE_KEYS,
    ]);
    expect(sorted(stored.flatMap((p) => p.ids))).toEqual(sorted(ids));
    expect(JSON.stringify(stored)).not.toContain(made.get(ids[0]!)!.key.toString('base64'));

    const found = await (await freshVault()).existing(tenant, refsOf(made));
    expect(found.size).toBe(ids.length);
    for (const id of ids) expect(foundFor(found, made, id)).toEqual(made.get(id)!.key);
  });

  it('destroys every key of a large erasure, found by one pass over the tenant, and no other', async () => {
    const tenant = newTenant();
    const odd = ['😀'.repeat(256), 'evt_a.b$c', '"quoted" {json}', 'ключ\\'];
    const ids = [...Array.from({ length: 600 }, memId), ...odd];
    const made = await (await freshVault()).keysFor(tenant, ids);
    // More than a lookup per id would be chosen for, with odd ids among them, spread over every page.
    const doomed = ids.filter((_, i) => i % 2 === 0);
    const spared = ids.filter((_, i) => i % 2 === 1);
    expect(await (await freshVault()).destroy(tenant, doomed)).toBe(doomed.length);
    const cold = await freshVault();
    expect((await cold.existing(tenant, refsOf(made))).size).toBe(spared.length);
    expect(await naming(tenant, doomed)).toEqual([]);
    const left = await cold.existing(tenant, refsOf(made));
    for (const id of spared) expect(foundFor(left, made, id)).toEqual(made.get(id)!.key);
  });

  it('seals through pages and still opens content sealed before them, both read cold in one call', async () => {
    const tenant = newTenant();
    const writer = await freshVault();
    const paged = Array.from({ length: 40 }, memId);
    const old = Array.from({ length: 40 }, memId);
    const sealed = await createContentCipher(writer).sealAll(
      paged.map((id) => ({ _id: id, tenant, content: `paged ${id}` })),
    );
    // Content sealed before pages: v1, under a key document of the record's own.
    const legacyKeys = await storeRecordKeys(db, writer.keks, tenant, old);
    const legacy = old.map((id) => ({
      _id: id,
      tenant,
      content: seal(legacyKeys.get(id)!, tenant, id, `old ${id}`, null),
    }));

    const opened = await createContentCipher(await freshVault()).openAll([...sealed, ...legacy]);
    expect(opened.map((r) => r.content)).toEqual([
      ...paged.map((id) => `paged ${id}`),
      ...old.map((id) => `old ${id}`),
    ]);

    const reader = await freshVault();
    expect(await reader.destroy(tenant, [paged[0]!, old[0]!])).toBe(2);
    const after = await createContentCipher(await freshVault()).openAll([...sealed, ...legacy]);
    expect(sorted(after.map((r) => r._id))).toEqual(sorted([...paged.slice(1), ...old.slice(1)]));
    expect(after.some((r) => isSealed(r.content))).toBe(false);
  });

  it('loses no destruction when eight processes destroy different keys of one page at once', async () => {
    const tenant = newTenant();
    const ids = Array.from({ length: 64 }, memId);
    const made = await (await freshVault()).keysFor(tenant, ids);
    expect(new Set([...made.values()].map((k) => k.page)).size).toBe(1);
    const destroyers = await Promise.all(Array.from({ length: 8 }, () => freshVault()));
    // Three rounds, each one key per process, all at once: 24 of the 64 destroyed.
    const doomed: string[] = [];
    for (let round = 0; round < 3; round++) {
      const picks = destroyers.map((_, i) => ids[round * 8 + i]!);
      doomed.push(...picks);
      const counts = await Promise.all(destroyers.map((vault, i) => vault.destroy(tenant, [picks[i]!])));
      expect(counts).toEqual(picks.map(() => 1));
    }
    const reader = await freshVault();
    expect(await reader.idsWithKeys(tenant, doomed)).toEqual([]);
    const left = await reader.existing(tenant, refsOf(made));
    expect(sorted([...left.keys()])).toEqual(
      sorted(ids.filter((id) => !doomed.includes(id)).map((id) => refKey({ id, page: made.get(id)!.page }))),
    );
    // The index names the records whose keys are left, and no destroyed one.
    const entries = await db
      .collection<{ member: string }>(Collections.dataKeys)
      .find({ tenant, member: { $exists: true } })
      .toArray();
    expect(sorted(entries.map((e) => e.member))).toEqual(sorted(ids.filter((id) => !doomed.includes(id))));
    // One generation is left of the page: the copies that still held the destroyed keys are gone.
    const stored = await storedPages(tenant);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.gen).toBe(24);
  });

  it('never brings back a key destroyed while a rotation re-wraps its page, and the rotation keeps the others', async () => {
    const tenant = newTenant();
    const ids = Array.from({ length: 120 }, memId);
    const made = await (await freshVault()).keysFor(tenant, ids);
    const rotator = await freshVault();
    const destroyer = await freshVault();
    const doomed = ids.filter((_, n) => n % 10 === 3);
    const [outcome] = await Promise.all([
      rotateKeks(rotator, rotator.keks, { settleMs: 50 }),
      (async () => {
        for (const id of doomed) await destroyer.destroy(tenant, [id]);
      })(),
    ]);
    expect(outcome.kept).toEqual([]);
    const reader = await freshVault();
    expect(await reader.idsWithKeys(tenant, doomed)).toEqual([]);
    const left = await reader.existing(tenant, refsOf(made));
    expect(left.size).toBe(ids.length - doomed.length);
    for (const id of ids.filter((i) => !doomed.includes(i)))
      expect(foundFor(left, made, id)).toEqual(made.get(id)!.key);
    for (const page of await storedPages(tenant)) expect(page.epoch).toBe(outcome.epoch);
  });

  it('discards the stale generation of a writer that stalled while two others rewrote the page, and redoes its change', async () => {
    const tenant = newTenant();
    const ids = Array.from({ length: 10 }, memId);
    const made = await (await freshVault()).keysFor(tenant, ids);
    const page = made.get(ids[0]!)!.page!;
    const pages = createKeyPages(pagesOf, Date.now);
    const without = (gone: string) => async (latest: KeyPageDoc) => {
      const keep = latest.ids.flatMap((id, i) => (id === gone ? [] : [i]));
      if (keep.length === latest.ids.length) return null;
      return {
        epoch: latest.epoch,
        ids: keep.map((i) => latest.ids[i]!),
        wrapped: keep.map((i) => latest.wrapped[i]!),
      };
    };
    // The stalled writer reads generation 0 and waits; two others take it to generation 2 (and delete 0 and 1).
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    let readZero!: () => void;
    const hasRead = new Promise<void>((resolve) => (readZero = resolve));
    let reads = 0;
    const slow = pages.rewrite(page, async (latest) => {
      reads += 1;
      if (reads === 1) {
        readZero();
        await stalled;
      }
      return without(ids[0]!)(latest);
    });
    await hasRead;
    await pages.rewrite(page, without(ids[1]!));
    await pages.rewrite(page, without(ids[2]!));
    expect((await storedPages(tenant)).map((p) => p.gen)).toEqual([2]);
    expect(sorted((await tombsOf(page)).map((t) => String(t.gen)))).toEqual(['0', '1']);
    // Its insert of generation 1 meets that generation's tomb, and it starts over from generation 2.
    release();
    const outcome = await slow;
    expect(reads).toBe(2);
    expect(outcome?.to?.gen).toBe(3);
    const stored = await storedPages(tenant);
    expect(stored.map((p) => p.gen)).toEqual([3]);
    expect(sorted(stored[0]!.ids)).toEqual(sorted(ids.slice(3)));
    const reader = await freshVault();
    expect(await reader.idsWithKeys(tenant, ids.slice(0, 3))).toEqual([]);
  });

  it('destroys every key of a record written twice by two processes, each in its own page', async () => {
    const tenant = newTenant();
    const id = memId();
    const first = await (await freshVault()).keysFor(tenant, [id, memId()]);
    const second = await (await freshVault()).keysFor(tenant, [id]);
    expect(first.get(id)!.page).not.toBe(second.get(id)!.page);
    const reader = await freshVault();
    expect(await reader.idsWithKeys(tenant, [id])).toEqual([id]);
    expect(await reader.destroy(tenant, [id])).toBe(1);
    expect(await reader.idsWithKeys(tenant, [id])).toEqual([]);
    const cold = await freshVault();
    expect((await cold.existing(tenant, [...refsOf(first), ...refsOf(second)])).size).toBe(1);
  });

  it('lets neither a record id shaped like a page document nor another tenant’s page reach a page', async () => {
    const tenant = newTenant();
    const other = newTenant();
    const ids = Array.from({ length: 5 }, memId);
    const made = await (await freshVault()).keysFor(tenant, ids);
    const page = made.get(ids[0]!)!.page!;
    const vault = await freshVault();
    // An erasure naming the page's document id as if it were a record's destroys nothing.
    expect(await vault.destroy(tenant, [`${page}.0`, `${page}#0`, page])).toBe(0);
    expect((await vault.existing(tenant, refsOf(made))).size).toBe(ids.length);
    // A sealed value of another tenant naming this page finds no key: the page is the tenant's own.
    expect((await (await freshVault()).existing(other, refsOf(made))).size).toBe(0);
    expect(await (await freshVault()).idsWithKeys(other, ids)).toEqual([]);
    expect(await vault.destroy(other, ids)).toBe(0);
    expect((await (await freshVault()).existing(tenant, refsOf(made))).size).toBe(ids.length);
  });

  it('keeps a retired generation’s id taken, so a stale writer that inserts it and dies is refused and leaves no copy', async () => {
    const tenant = newTenant();
    const ids = Array.from({ length: 6 }, memId);
    const made = await (await freshVault()).keysFor(tenant, ids);
    const page = made.get(ids[0]!)!.page!;
    // What a writer read before two erasures took the page on: generation 0, every key in it.
    const [stale] = await storedPages(tenant);
    expect(stale!.gen).toBe(0);
    const vault = await freshVault();
    expect(await vault.destroy(tenant, [ids[0]!])).toBe(1);
    expect(await vault.destroy(tenant, [ids[1]!])).toBe(1);
    // It inserts generation 1 from that read as the last thing it does: the tomb of generation 1 refuses it.
    await expect(pagesOf.insertOne({ ...stale!, _id: `${page}.1`, gen: 1 })).rejects.toMatchObject({ code: 11000 });
    expect(await naming(tenant, ids.slice(0, 2))).toEqual([]);
    expect(await (await freshVault()).idsWithKeys(tenant, ids.slice(0, 2))).toEqual([]);
    // A tomb is an id and a number: no key, no record id.
    const tombs = await tombsOf(page);
    expect(tombs.map((t) => t.gen).sort()).toEqual([0, 1]);
    for (const t of tombs) expect(Object.keys(t).sort()).toEqual(['_id', 'at', 'gen', 'tenant', 'tombOf']);
    // A record id equal to a tomb's id destroys nothing, the tomb included.
    expect(await vault.destroy(tenant, [`${page}.0`, `${page}.1`])).toBe(0);
    expect(await tombsOf(page)).toHaveLength(2);
  });

  it('retires a page whose every key is destroyed, with its index entries, and leaves the page beside it', async () => {
    const tenant = newTenant();
    const gone = Array.from({ length: 4 }, memId);
    const kept = Array.from({ length: 3 }, memId);
    const writer = await freshVault();
    const goneKeys = await writer.keysFor(tenant, gone);
    const keptKeys = await writer.keysFor(tenant, kept);
    const page = goneKeys.get(gone[0]!)!.page!;
    const vault = await freshVault();
    expect(await vault.destroy(tenant, gone.slice(0, 2))).toBe(2);
    expect(await vault.destroy(tenant, gone)).toBe(2);
    // No generation of it is left for a reader, only tombs, and nothing stored names its records.
    expect((await storedPages(tenant)).filter((p) => p.page === page)).toEqual([]);
    expect((await tombsOf(page)).map((t) => t.gen).sort()).toEqual([0, 1, 2]);
    expect(await naming(tenant, gone)).toEqual([]);
    expect(await vault.destroy(tenant, gone)).toBe(0);
    const cold = await freshVault();
    expect((await cold.existing(tenant, refsOf(goneKeys))).size).toBe(0);
    const left = await cold.existing(tenant, refsOf(keptKeys));
    expect(left.size).toBe(kept.length);
    for (const id of kept) expect(foundFor(left, keptKeys, id)).toEqual(keptKeys.get(id)!.key);
  });

  it('re-wraps every page under the old epoch, even behind more empty pages than a rotation reads at once', async () => {
    const tenant = newTenant();
    const vault = await freshVault();
    const epoch = (await vault.keks.epochs()).at(-1)!.epoch;
    // Pages whose every key was destroyed, as they were once left (an empty generation): 300, first in any order.
    await pagesOf.insertMany(
      Array.from({ length: 300 }, (_, i) => {
        const page = `kp_${'0'.repeat(28)}${i.toString(16).padStart(4, '0')}`;
        return { _id: `${page}.0`, page, gen: 0, tenant, epoch, ids: [], wrapped: [], createdAt: new Date() };
      }),
    );
    const ids = Array.from({ length: 5 }, memId);
    const made = await vault.keysFor(tenant, ids);
    const outcome = await rotateKeks(vault, vault.keks, { settleMs: 0 });
    expect(outcome.kept).toEqual([]);
    expect(outcome.destroyed).toContain(epoch);
    // The empty ones are gone, and the keys left are under the new epoch, every one opening cold.
    const stored = await storedPages(tenant);
    expect(stored.map((p) => [p.ids.length, p.epoch])).toEqual([[ids.length, outcome.epoch]]);
    const left = await (await freshVault()).existing(tenant, refsOf(made));
    for (const id of ids) expect(foundFor(left, made, id)).toEqual(made.get(id)!.key);
  });

  it('lets a rotation delete the tombs a day old, and not the younger ones', async () => {
    const tenant = newTenant();
    const ids = Array.from({ length: 3 }, memId);
    const vault = await freshVault();
    const page = (await vault.keysFor(tenant, ids)).get(ids[0]!)!.page!;
    expect(await vault.destroy(tenant, [ids[0]!])).toBe(1);
    await rotateKeks(vault, vault.keks, { settleMs: 0 });
    expect((await tombsOf(page)).map((t) => t.gen).sort()).toEqual([0, 1]);
    // A day and a minute on: the rotation rewrites the page once more, and deletes the tombs older than a day.
    const later = await freshVault(() => Date.now() + TOMB_KEEP_MS + 60_000);
    const outcome = await rotateKeks(later, later.keks, { settleMs: 0 });
    expect(outcome.tombsSwept).toBeGreaterThanOrEqual(2);
    expect((await tombsOf(page)).map((t) => t.gen)).toEqual([2]);
    expect((await storedPages(tenant)).map((p) => p.gen)).toEqual([3]);
  });

  it('leaves no index entry naming a record when its page cannot be stored', async () => {
    const tenant = newTenant();
    // The page's insert fails (a full disk, a lost connection); the entries' insert, before it, went through.
    const failing = new Proxy(pagesOf, {
      get(target, prop) {
        if (prop === 'insertOne') return () => Promise.reject(new Error('no space left on device'));
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const ids = Array.from({ length: 4 }, memId);
    await expect(
      createKeyPages(failing, Date.now).insert(
        tenant,
        1,
        ids,
        ids.map(() => 'wrapped'),
      ),
    ).rejects.toThrow('no space left on device');
    expect(await naming(tenant, ids)).toEqual([]);
  });
});
