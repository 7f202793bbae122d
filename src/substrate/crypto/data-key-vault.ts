import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { BoundedMap } from '../../shared/bounded-map.js';
import { findByIds } from '../mongo/bounded-scan.js';
import { Collections, mapBounded } from '../mongo/collections.js';
import { DATA_KEY_BYTES } from './content-seal.js';
import { createKeyPages, PAGE_KEYS, type KeyIndexDoc, type KeyPageDoc, type KeyPageTomb } from './key-pages.js';
import { KekEpochGone, type KeyEncryptionKeys } from './key-encryption-keys.port.js';

/**
 * A record's data key in a document of its own, as keys were stored before pages: its id is the record's. Still
 * read (content sealed as v1 names no page), destroyed and re-wrapped; no longer written.
 */
interface RecordKeyDoc {
  _id: string;
  tenant: string;
  /**
   * The kind of record it seals (its id's prefix: `mem`, `evt`…). Reads of many records of one kind scan only the
   * keys of that kind. Keys made before the field was added lack it until a rotation re-wraps them; they are found
   * by lookup instead.
   */
  kind?: string;
  epoch: number;
  wrapped: string;
  createdAt: Date;
  /** Never set on a record's key: pages (`KeyPageDoc`) and their index entries (`KeyIndexDoc`) share the collection. */
  page?: undefined;
  member?: undefined;
}

type VaultDoc = RecordKeyDoc | KeyPageDoc | KeyIndexDoc | KeyPageTomb;
const isPage = (doc: VaultDoc): doc is KeyPageDoc => typeof (doc as KeyPageDoc).page === 'string';
const isEntry = (doc: VaultDoc): doc is KeyIndexDoc => typeof (doc as KeyIndexDoc).member === 'string';
const isTomb = (doc: VaultDoc): doc is KeyPageTomb => typeof (doc as KeyPageTomb).tombOf === 'string';
/** A page's document, its tomb or an index entry: not a record's own key document, whatever its id. */
const ofPages = (doc: VaultDoc) => isPage(doc) || isEntry(doc) || isTomb(doc);

/** Which keys were destroyed, and when: what other processes read to drop the keys they hold in memory. */
interface DestructionDoc {
  _id: string;
  /** SHA-256 of tenant and record id (see `cacheKey`): the feed names no record, not even by its id. */
  keys: string[];
  at: Date;
}

/** Where a record's key is: the page its sealed content names, or (content sealed before pages) none. */
export interface KeyRef {
  id: string;
  page: string | null;
}

/** A key to seal a record under, and the page to name in the sealed value (null: the record's own key document). */
export interface SealingKey {
  key: Buffer;
  page: string | null;
}

/** How `existing` names what it found: a record's id can have keys in more than one place. */
export const refKey = (ref: KeyRef) => `${ref.page ?? ''}\u0000${ref.id}`;

/**
 * The data keys of records, in the `data_keys` collection, each wrapped by the KEK service and bound to its tenant
 * and record id. Keys of records written together are kept together in pages (`KeyPageDoc`): a read of a thousand
 * records reads a few documents of keys rather than a thousand. Every key still belongs to one record: erasing a
 * closure destroys the keys of exactly the records it erases (their pages are rewritten without them), and nothing
 * else becomes unreadable.
 *
 * Every process keeps the keys it unwrapped in memory (a bounded LRU). A destruction is written to a feed that every
 * process polls (`pollMs`); a process drops the destroyed keys at its next poll, and if it has not heard from the
 * feed for `boundMs` it stops trusting its memory and reads every key from the vault again. So a key destroyed by
 * any process stops opening content in every process within `boundMs` (the process that destroyed it: at once).
 */
export interface DataKeyVault {
  ensureIndexes(): Promise<void>;
  /**
   * Keys to seal the records under: the one this process holds for a record, otherwise a new key, in a new page
   * shared by the records of this call. A record written again by another process gets another key in another page;
   * both are its keys, and both are destroyed with it.
   */
  keysFor(tenant: string, ids: readonly string[]): Promise<Map<string, SealingKey>>;
  /** The keys these refs name that still exist, by `refKey`; a destroyed (or never made) key is absent. */
  existing(tenant: string, refs: readonly KeyRef[]): Promise<Map<string, Buffer>>;
  /** Which of the records still have a key anywhere in the vault, read from the vault itself (no process memory). */
  idsWithKeys(tenant: string, ids: readonly string[]): Promise<string[]>;
  /** The KEK service's epochs (when each began, and was destroyed). */
  readonly keks: KeyEncryptionKeys;
  /**
   * The KEK service, its current epoch and every epoch not yet destroyed (`liveEpochs`, oldest first): what a
   * certificate names of the shredding. A copy of a destroyed data key kept in the log or a backup is wrapped under
   * one of the epochs live when it was written, so it lapses only once all of those are destroyed.
   */
  state(): Promise<{ kek: string; epoch: number; liveEpochs: number[]; boundMs: number; rotationEveryMs?: number }>;
  /**
   * Destroys every key of the records (idempotent); returns how many of the records had one before this call.
   * `beforeDestroy` is given that count once it is known and before any key is destroyed.
   */
  destroy(tenant: string, ids: readonly string[], beforeDestroy?: (keys: number) => Promise<void>): Promise<number>;
  /** The longest a destroyed key can still open content in any process, in ms. */
  readonly boundMs: number;
  /** Re-wraps every key held under an epoch older than the current one; returns how many. */
  rewrapOlderThan(epoch: number, onProgress?: (done: number) => void): Promise<number>;
  /** Deletes the tombs of key pages' older generations kept a day; returns how many. */
  sweepTombs(): Promise<number>;
  /** Keys still wrapped under `epoch`. */
  countUnder(epoch: number): Promise<number>;
  /** Stops polling the feed. */
  close(): void;
}

export interface VaultTiming {
  pollMs: number;
  boundMs: number;
  /** The scheduled KEK rotation's interval, if one runs: by when a destroyed key's copies lapse. */
  rotationEveryMs?: number;
}

export const DEFAULT_VAULT_TIMING: VaultTiming = { pollMs: 1000, boundMs: 5000 };
const CACHE_ENTRIES = 100_000;
/** Destruction entries older than this are removed by the next destruction: every live process has read them. */
const FEED_KEEP_MS = 10 * 60_000;
/** Entries are read this far back from the last poll, for clocks that differ between hosts. */
const FEED_OVERLAP_MS = 30_000;
const FEED_PAGE = 1000;
/** Vault documents re-wrapped per read of a rotation (a page's document holds up to `PAGE_KEYS` keys). */
const ROTATION_BATCH = 256;

/** What a key is bound to when wrapped: its tenant and record id, wherever it is kept. */
export const keyContext = (tenant: string, id: string) => `data-key|${Buffer.byteLength(tenant)}:${tenant}|${id}`;

/** A key's kind: its record id's prefix of letters and digits before the first `_` (`mem_…` → `mem`), or `other`. */
export function keyKindOf(id: string): string {
  return /^([a-z0-9]{1,16})_/.exec(id)?.[1] ?? 'other';
}

/** The ids grouped by kind, each group in the order given. */
function byKind(ids: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const id of ids) {
    const kind = keyKindOf(id);
    const group = groups.get(kind);
    if (group) group.push(id);
    else groups.set(kind, [id]);
  }
  return groups;
}

export function createDataKeyVault(
  db: Db,
  keks: KeyEncryptionKeys,
  timing: VaultTiming = DEFAULT_VAULT_TIMING,
  clock: () => number = Date.now,
): DataKeyVault {
  const keys = db.collection<VaultDoc>(Collections.dataKeys);
  const recordKeys = keys as unknown as Collection<RecordKeyDoc>;
  const pages = createKeyPages(keys as unknown as Collection<KeyPageDoc>, clock);
  const feed = db.collection<DestructionDoc>(Collections.dataKeyDestructions);
  // By record: every key this process holds for it, by page ('' for its own key document).
  const cache = new BoundedMap<string, Map<string, Buffer>>(CACHE_ENTRIES);
  // Hashed, so that the feed, which every process reads, names no erased record: its entries are these keys.
  const cacheKey = (tenant: string, id: string) =>
    createHash('sha256')
      .update(`${Buffer.byteLength(tenant)}:${tenant}|${id}`)
      .digest('hex');
  const remember = (tenant: string, ref: KeyRef, key: Buffer) => {
    const slot = cacheKey(tenant, ref.id);
    const held = cache.get(slot) ?? new Map<string, Buffer>();
    held.set(ref.page ?? '', key);
    cache.set(slot, held);
  };
  let heardAt = 0;
  let readSince = clock() - FEED_OVERLAP_MS;

  // Entries are applied again at every poll while they are within the overlap: a key read from the vault in the
  // moment between its feed entry and its deletion is dropped by a later poll.
  const poll = async () => {
    const startedAt = clock();
    const entries = await feed.find({ at: { $gte: new Date(readSince - FEED_OVERLAP_MS) } }).toArray();
    for (const entry of entries) for (const key of Array.isArray(entry.keys) ? entry.keys : []) cache.delete(key);
    readSince = startedAt;
    heardAt = startedAt;
  };
  let polling = false;
  const timer = setInterval(() => {
    if (polling) return;
    polling = true;
    poll()
      .catch(() => undefined)
      .finally(() => (polling = false));
  }, timing.pollMs);
  timer.unref();

  /** What this process holds for the record (while it trusts its memory), by page. */
  const held = (tenant: string, id: string): Map<string, Buffer> | undefined =>
    clock() - heardAt < timing.boundMs ? cache.get(cacheKey(tenant, id)) : undefined;

  /** Unwraps one key; null when its epoch is destroyed (a key restored from a backup older than a rotation). */
  const unwrap = async (tenant: string, id: string, epoch: number, wrapped: string) => {
    try {
      return await keks.unwrap(epoch, wrapped, keyContext(tenant, id));
    } catch (error) {
      if (error instanceof KekEpochGone) return null;
      throw error;
    }
  };

  /** Keys of content sealed before pages: one document per record, read by kind. */
  const recordKeysOf = async (tenant: string, ids: readonly string[], into: Map<string, Buffer>) => {
    for (const [kind, group] of byKind([...new Set(ids)])) {
      // Only what unwrapping needs; `page` to pass over a page's document whose id a record id happens to equal.
      const docs = await findByIds(recordKeys, tenant, group, {
        within: { kind },
        projection: { epoch: 1, wrapped: 1, page: 1, member: 1, tombOf: 1 },
      });
      await mapBounded(
        docs.filter((d) => !ofPages(d) && typeof d.wrapped === 'string'),
        16,
        async (doc) => {
          const key = await unwrap(tenant, doc._id, doc.epoch, doc.wrapped);
          if (!key) return;
          remember(tenant, { id: doc._id, page: null }, key);
          into.set(refKey({ id: doc._id, page: null }), key);
        },
      );
    }
  };

  /** Keys of content sealed in pages: each page's current generation, read once. */
  const pagedKeysOf = async (tenant: string, refs: readonly KeyRef[], into: Map<string, Buffer>) => {
    const wanted = new Map<string, Set<string>>();
    for (const { id, page } of refs) {
      const ids = wanted.get(page!) ?? new Set<string>();
      ids.add(id);
      wanted.set(page!, ids);
    }
    const current = await pages.latest(tenant, [...wanted.keys()]);
    const jobs: { page: string; id: string; epoch: number; wrapped: string }[] = [];
    for (const [page, doc] of current) {
      const ids = wanted.get(page)!;
      doc.ids.forEach((id, i) => {
        if (ids.has(id)) jobs.push({ page, id, epoch: doc.epoch, wrapped: doc.wrapped[i]! });
      });
    }
    await mapBounded(jobs, 16, async (job) => {
      const key = await unwrap(tenant, job.id, job.epoch, job.wrapped);
      if (!key) return;
      remember(tenant, job, key);
      into.set(refKey(job), key);
    });
  };

  const existing = async (tenant: string, refs: readonly KeyRef[]) => {
    const found = new Map<string, Buffer>();
    const missing: KeyRef[] = [];
    for (const ref of refs) {
      const key = held(tenant, ref.id)?.get(ref.page ?? '');
      if (key) found.set(refKey(ref), key);
      else missing.push(ref);
    }
    await Promise.all([
      recordKeysOf(
        tenant,
        missing.filter((r) => r.page === null).map((r) => r.id),
        found,
      ),
      pagedKeysOf(
        tenant,
        missing.filter((r) => r.page !== null),
        found,
      ),
    ]);
    return found;
  };

  /**
   * Ids of these records that have a key document of their own. Mostly none do (such documents are no longer
   * written), and only a pass over all of the tenant's vault can tell so without a lookup per id: a pass over one
   * kind's keys misses those made before kinds were recorded. The pass is bounded like any scan (many ids in a large
   * tenant fall back to lookups), and it proves absence for every id at once: a destroy of a whole erase set reads the
   * tenant once instead of looking every id up.
   */
  const idsWithRecordKeys = async (tenant: string, ids: readonly string[]) => {
    const docs = await findByIds(recordKeys, tenant, ids, { projection: { page: 1, member: 1, tombOf: 1 } });
    return docs.filter((doc) => !ofPages(doc)).map((doc) => doc._id);
  };

  /** Wraps fresh keys for the ids under the current epoch, a page at a time. */
  const makeKeys = async (tenant: string, ids: readonly string[], into: Map<string, SealingKey>) => {
    for (let i = 0; i < ids.length; i += PAGE_KEYS) {
      const slice = ids.slice(i, i + PAGE_KEYS);
      const wrapAll = (entries: readonly { id: string; key: Buffer }[]) =>
        Promise.all(
          entries.map(async ({ id, key }) => ({ id, key, ...(await keks.wrap(key, keyContext(tenant, id))) })),
        );
      let made = await wrapAll(slice.map((id) => ({ id, key: randomBytes(DATA_KEY_BYTES) })));
      // One epoch per page: keys wrapped across the start of a rotation are wrapped again, under the newest.
      while (new Set(made.map((m) => m.epoch)).size > 1) made = await wrapAll(made);
      const page = await pages.insert(
        tenant,
        made[0]!.epoch,
        made.map((m) => m.id),
        made.map((m) => m.wrapped),
      );
      for (const m of made) {
        remember(tenant, { id: m.id, page }, m.key);
        into.set(m.id, { key: m.key, page });
      }
    }
  };

  return {
    keks,
    boundMs: timing.boundMs,
    async ensureIndexes() {
      await keys.createIndex({ tenant: 1 });
      await keys.createIndex({ tenant: 1, kind: 1 });
      await keys.createIndex({ epoch: 1 });
      await pages.ensureIndexes();
      await feed.createIndex({ at: 1 });
      await poll();
    },
    existing,
    async idsWithKeys(tenant, ids) {
      const unique = [...new Set(ids)];
      const [own, paged] = await Promise.all([idsWithRecordKeys(tenant, unique), pages.holding(tenant, unique)]);
      const found = new Set([...own, ...paged.keys()]);
      return unique.filter((id) => found.has(id));
    },
    async state() {
      const epochs = await keks.epochs();
      return {
        kek: keks.kind,
        epoch: epochs[epochs.length - 1]!.epoch,
        liveEpochs: epochs.filter((e) => e.destroyedAt === null).map((e) => e.epoch),
        boundMs: timing.boundMs,
        ...(timing.rotationEveryMs ? { rotationEveryMs: timing.rotationEveryMs } : {}),
      };
    },
    async keysFor(tenant, ids) {
      // A key this process holds is used as it is (a page's before a record's own); the others are made new.
      const found = new Map<string, SealingKey>();
      const missing: string[] = [];
      for (const id of new Set(ids)) {
        const mine = held(tenant, id);
        const entry = mine ? ([...mine].find(([page]) => page !== '') ?? [...mine][0]) : undefined;
        if (entry) found.set(id, { key: entry[1], page: entry[0] === '' ? null : entry[0] });
        else missing.push(id);
      }
      if (missing.length > 0) await makeKeys(tenant, missing, found);
      return found;
    },
    async destroy(tenant, ids, beforeDestroy) {
      const unique = [...new Set(ids)];
      const hashed = unique.map((id) => cacheKey(tenant, id));
      for (const key of hashed) cache.delete(key);
      if (unique.length === 0) return 0;
      // The feed first: a process that reads a key between the delete and the feed entry would keep it otherwise.
      const now = clock();
      await feed.deleteMany({ at: { $lt: new Date(now - FEED_KEEP_MS) } });
      for (let i = 0; i < unique.length; i += FEED_PAGE) {
        await feed.insertOne({ _id: randomUUID(), keys: hashed.slice(i, i + FEED_PAGE), at: new Date(now) });
      }
      // What there is to destroy, counted before anything is: a caller that records it knows, after a crash
      // mid-destroy, how many keys its call destroyed (a second call finds them gone).
      const [own, located] = await Promise.all([idsWithRecordKeys(tenant, unique), pages.locate(tenant, unique)]);
      const had = new Set([...own, ...located.held.keys()]).size;
      await beforeDestroy?.(had);
      await Promise.all([
        mapBounded(own, 32, (id) =>
          // A record id equal to a page document's, a tomb's or an index entry's id must not delete it.
          recordKeys.deleteOne({
            _id: id,
            tenant,
            page: { $exists: false },
            member: { $exists: false },
            tombOf: { $exists: false },
          }),
        ),
        pages.remove(tenant, unique, located),
      ]);
      return had;
    },
    async rewrapOlderThan(epoch, onProgress) {
      // By epoch, not by id: the documents still under an older epoch are asked for again after each batch (a
      // re-wrapped one leaves the filter), an equality the local server answers from its index.
      const older = (await keks.epochs()).filter((e) => e.epoch < epoch && e.destroyedAt === null);
      let done = 0;
      for (const { epoch: from } of older) {
        for (;;) {
          const batch = await keys.find({ epoch: from }, { limit: ROTATION_BATCH }).toArray();
          if (batch.length === 0) break;
          let moved = 0;
          let changed = 0;
          await mapBounded(batch, 16, async (doc) => {
            if (isPage(doc)) {
              const outcome = await pages.rewrite(doc.page, async (latest) => {
                if (latest.epoch >= epoch) return null;
                const next = await Promise.all(
                  latest.ids.map(async (id, i) => {
                    const context = keyContext(latest.tenant, id);
                    return keks.wrap(await keks.unwrap(latest.epoch, latest.wrapped[i]!, context), context);
                  }),
                );
                const epochs = new Set(next.map((n) => n.epoch));
                // Another rotation began during this page: it is left to that one (or to the next pass).
                if (epochs.size !== 1) return null;
                return { epoch: next[0]!.epoch, ids: latest.ids, wrapped: next.map((n) => n.wrapped) };
              });
              if (outcome?.to) moved += outcome.to.ids.length;
              // A generation left by a stopped writer was cleaned up: the batch changed all the same.
              // So did an emptied page retired: it left the filter.
              if (outcome && (outcome.to || outcome.gone || outcome.from.gen !== doc.gen)) changed += 1;
              return;
            }
            // Index entries and tombs hold no key and no epoch: the filter never returns one.
            if (isEntry(doc) || isTomb(doc)) return;
            const context = keyContext(doc.tenant, doc._id);
            const next = await keks.wrap(await keks.unwrap(doc.epoch, doc.wrapped, context), context);
            // Only if it is still the key read: a concurrent destroy wins. A key made before kinds were recorded
            // gets its kind here.
            const result = await recordKeys.updateOne(
              { _id: doc._id, epoch: doc.epoch },
              { $set: { epoch: next.epoch, wrapped: next.wrapped, kind: keyKindOf(doc._id) } },
            );
            moved += result.modifiedCount;
            changed += result.modifiedCount;
          });
          done += moved;
          onProgress?.(done);
          // A batch of which nothing changed would be read again forever: another rotation is under way.
          if (changed === 0) break;
        }
      }
      return done;
    },
    sweepTombs: () => pages.sweepTombs(),
    async countUnder(epoch) {
      const docs = await keys.find({ epoch }, { projection: { ids: 1, page: 1 } }).toArray();
      return docs.reduce((n, doc) => n + (isPage(doc) ? doc.ids.length : 1), 0);
    },
    close: () => clearInterval(timer),
  };
}
