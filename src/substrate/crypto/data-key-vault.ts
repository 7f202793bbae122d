import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { BoundedMap } from '../../shared/bounded-map.js';
import { findByIds } from '../mongo/bounded-scan.js';
import { Collections, isDuplicateKey, mapBounded } from '../mongo/collections.js';
import { DATA_KEY_BYTES } from './content-seal.js';
import { KekEpochGone, type KeyEncryptionKeys } from './key-encryption-keys.port.js';

/** A record's data key, wrapped under a KEK epoch. Its id is the record's: one key per record. */
interface DataKeyDoc {
  _id: string;
  tenant: string;
  /**
   * The kind of record it seals (its id's prefix: `mem`, `evt`…). Reads of many records of one kind scan only the
   * keys of that kind: in a tenant whose events and memories are keyed alike, a scan by tenant alone read the
   * events' keys too, as many again as it wanted. Keys made before the field was added lack it until a rotation
   * re-wraps them; they are found by lookup instead.
   */
  kind?: string;
  epoch: number;
  wrapped: string;
  createdAt: Date;
}

/** Which keys were destroyed, and when: what other processes read to drop the keys they hold in memory. */
interface DestructionDoc {
  _id: string;
  /** SHA-256 of tenant and record id (see `cacheKey`): the feed names no record, not even by its id. */
  keys: string[];
  at: Date;
}

/**
 * One data key per record, in the `data_keys` collection, wrapped by the KEK service. Erasing a closure destroys the
 * keys of exactly the records it erases: no other record shares one, so nothing else becomes unreadable.
 *
 * Every process keeps the keys it unwrapped in memory (a bounded LRU). A destruction is written to a feed that every
 * process polls (`pollMs`); a process drops the destroyed keys at its next poll, and if it has not heard from the
 * feed for `boundMs` it stops trusting its memory and reads every key from the vault again. So a key destroyed by
 * any process stops opening content in every process within `boundMs` (the process that destroyed it: at once).
 */
export interface DataKeyVault {
  ensureIndexes(): Promise<void>;
  /** The records' keys, made (and wrapped) where missing. Idempotent: a record that has a key keeps it. */
  keysFor(tenant: string, ids: readonly string[]): Promise<Map<string, Buffer>>;
  /** The records' existing keys; a record whose key is destroyed (or never existed) is absent. */
  existing(tenant: string, ids: readonly string[]): Promise<Map<string, Buffer>>;
  /** Which of the records still have a key in the vault, read from the vault itself (no process memory). */
  idsWithKeys(tenant: string, ids: readonly string[]): Promise<string[]>;
  /** The KEK service's epochs (when each began, and was destroyed). */
  readonly keks: KeyEncryptionKeys;
  /** The KEK service and its current epoch: what a certificate names of the shredding. */
  state(): Promise<{ kek: string; epoch: number; boundMs: number }>;
  /** Destroys the records' keys (idempotent); returns how many this call removed from the vault. */
  destroy(tenant: string, ids: readonly string[]): Promise<number>;
  /** The longest a destroyed key can still open content in any process, in ms. */
  readonly boundMs: number;
  /** Re-wraps every key held under an epoch older than the current one; returns how many. */
  rewrapOlderThan(epoch: number, onProgress?: (done: number) => void): Promise<number>;
  /** Keys still wrapped under `epoch`. */
  countUnder(epoch: number): Promise<number>;
  /** Stops polling the feed. */
  close(): void;
}

export interface VaultTiming {
  pollMs: number;
  boundMs: number;
}

export const DEFAULT_VAULT_TIMING: VaultTiming = { pollMs: 1000, boundMs: 5000 };
const CACHE_ENTRIES = 100_000;
/** Destruction entries older than this are removed by the next destruction: every live process has read them. */
const FEED_KEEP_MS = 10 * 60_000;
/** Entries are read this far back from the last poll, for clocks that differ between hosts. */
const FEED_OVERLAP_MS = 30_000;
const PAGE = 1000;

interface WriteFailure {
  code?: number;
  index: number;
}

const contextOf = (tenant: string, id: string) => `data-key|${Buffer.byteLength(tenant)}:${tenant}|${id}`;

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
  const keys = db.collection<DataKeyDoc>(Collections.dataKeys);
  const feed = db.collection<DestructionDoc>(Collections.dataKeyDestructions);
  const cache = new BoundedMap<string, Buffer>(CACHE_ENTRIES);
  // Hashed, so that the feed, which every process reads, names no erased record: its entries are these keys.
  const cacheKey = (tenant: string, id: string) =>
    createHash('sha256')
      .update(`${Buffer.byteLength(tenant)}:${tenant}|${id}`)
      .digest('hex');
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

  /** The cache is trusted only while the feed has been heard within the bound. */
  const cached = (tenant: string, id: string): Buffer | undefined =>
    clock() - heardAt < timing.boundMs ? cache.get(cacheKey(tenant, id)) : undefined;

  const unwrapAll = async (tenant: string, docs: readonly DataKeyDoc[], into: Map<string, Buffer>) => {
    await mapBounded([...docs], 16, async (doc) => {
      try {
        const key = await keks.unwrap(doc.epoch, doc.wrapped, contextOf(tenant, doc._id));
        cache.set(cacheKey(tenant, doc._id), key);
        into.set(doc._id, key);
      } catch (error) {
        // Wrapped under a destroyed epoch: a key restored from a backup older than a rotation. It opens nothing.
        if (!(error instanceof KekEpochGone)) throw error;
      }
    });
  };

  /** The ids' keys this process holds (while it trusts its memory), and the ids it does not. */
  const fromMemory = (tenant: string, ids: readonly string[]) => {
    const found = new Map<string, Buffer>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const key = cached(tenant, id);
      if (key) found.set(id, key);
      else missing.push(id);
    }
    return { found, missing };
  };

  const existing = async (tenant: string, ids: readonly string[]) => {
    const { found, missing } = fromMemory(tenant, ids);
    for (const [kind, group] of byKind(missing))
      await unwrapAll(
        tenant,
        // Only what unwrapping needs: a cold read of many records reads one key document per record.
        await findByIds(keys, tenant, group, { within: { kind }, projection: { epoch: 1, wrapped: 1 } }),
        found,
      );
    return found;
  };

  return {
    keks,
    boundMs: timing.boundMs,
    async ensureIndexes() {
      await keys.createIndex({ tenant: 1 });
      await keys.createIndex({ tenant: 1, kind: 1 });
      await keys.createIndex({ epoch: 1 });
      await feed.createIndex({ at: 1 });
      await poll();
    },
    existing,
    async idsWithKeys(tenant, ids) {
      const docs = await findByIds(keys, tenant, [...new Set(ids)], { projection: { _id: 1, tenant: 1 } });
      return docs.map((d) => d._id);
    },
    async state() {
      const epochs = await keks.epochs();
      return { kek: keks.kind, epoch: epochs[epochs.length - 1]!.epoch, boundMs: timing.boundMs };
    },
    async keysFor(tenant, ids) {
      // Keys in memory are used as they are; for the others a new key is inserted at once, and only the ids whose
      // insert meets a key already there are read back (a new record, the common case, costs no lookup).
      const { found, missing } = fromMemory(tenant, ids);
      if (missing.length === 0) return found;
      const made = await Promise.all(
        missing.map(async (id) => {
          const key = randomBytes(DATA_KEY_BYTES);
          const { epoch, wrapped } = await keks.wrap(key, contextOf(tenant, id));
          return { key, doc: { _id: id, tenant, kind: keyKindOf(id), epoch, wrapped, createdAt: new Date(clock()) } };
        }),
      );
      let lost: string[] = [];
      try {
        await keys.insertMany(
          made.map((m) => m.doc),
          { ordered: false },
        );
      } catch (error) {
        // Another writer made some of these keys first: theirs are kept, and read back below.
        const raw = (error as { writeErrors?: WriteFailure | WriteFailure[] }).writeErrors;
        const failures = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
        if (failures.length === 0 || !failures.every((e) => isDuplicateKey(e))) throw error;
        lost = failures.map((e) => made[e.index]!.doc._id);
      }
      const lostSet = new Set(lost);
      for (const m of made) {
        if (lostSet.has(m.doc._id)) continue;
        cache.set(cacheKey(tenant, m.doc._id), m.key);
        found.set(m.doc._id, m.key);
      }
      if (lost.length > 0) for (const [id, key] of await existing(tenant, lost)) found.set(id, key);
      return found;
    },
    async destroy(tenant, ids) {
      const unique = [...new Set(ids)];
      const hashed = unique.map((id) => cacheKey(tenant, id));
      for (const key of hashed) cache.delete(key);
      if (unique.length === 0) return 0;
      // The feed first: a process that reads a key between the delete and the feed entry would keep it otherwise.
      const now = clock();
      await feed.deleteMany({ at: { $lt: new Date(now - FEED_KEEP_MS) } });
      for (let i = 0; i < unique.length; i += PAGE) {
        await feed.insertOne({ _id: randomUUID(), keys: hashed.slice(i, i + PAGE), at: new Date(now) });
      }
      const results = await mapBounded(unique, 32, (id) => keys.deleteOne({ _id: id, tenant }));
      return results.reduce((n, r) => n + r.deletedCount, 0);
    },
    async rewrapOlderThan(epoch, onProgress) {
      // By epoch, not by id: the keys still under an older epoch are asked for again after each page (a re-wrapped
      // key leaves the filter), an equality the local server answers from its index. Paging by id through the whole
      // vault sorted would read it again for every page there.
      const older = (await keks.epochs()).filter((e) => e.epoch < epoch && e.destroyedAt === null);
      let done = 0;
      for (const { epoch: from } of older) {
        for (;;) {
          const page = await keys.find({ epoch: from }, { limit: PAGE }).toArray();
          if (page.length === 0) break;
          let moved = 0;
          await mapBounded(page, 16, async (doc) => {
            const context = contextOf(doc.tenant, doc._id);
            const next = await keks.wrap(await keks.unwrap(doc.epoch, doc.wrapped, context), context);
            // Only if it is still the key read: a concurrent destroy wins. A key made before kinds were recorded
            // gets its kind here.
            const result = await keys.updateOne(
              { _id: doc._id, epoch: doc.epoch },
              { $set: { epoch: next.epoch, wrapped: next.wrapped, kind: keyKindOf(doc._id) } },
            );
            moved += result.modifiedCount;
          });
          done += moved;
          onProgress?.(done);
          // A page of which nothing moved would be read again forever: another rotation is under way.
          if (moved === 0) break;
        }
      }
      return done;
    },
    countUnder: (epoch) => keys.countDocuments({ epoch }),
    close: () => clearInterval(timer),
  };
}
