import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import { isDuplicateKey, mapBounded } from '../mongo/collections.js';

/**
 * A page of data keys: the keys of records sealed together (a written batch), each wrapped on its own under the
 * page's KEK epoch, in one document. `ids[i]`'s key is `wrapped[i]`. Kept in the vault's collection beside the
 * per-record key documents written before pages (which have no `page`).
 *
 * Each key also has an index entry (`KeyIndexDoc`: the record id and its page, no key) through which an erasure
 * finds the pages holding a record's keys. Entries are written before their page and deleted after the key is gone
 * from every generation of it, so an entry may name a page that does not hold the key, never the other way round.
 *
 * A page is never updated in place. On the local server an update reads the whole document and writes it back, so
 * two concurrent rewrites of one page would lose one of them, and a lost destruction brings a destroyed key back.
 * Instead every change inserts the page's next generation (`<page>.<gen>`): the insert of a generation's unique id
 * is the arbiter, so of two writers that read the same generation exactly one extends it, and the other reads the
 * new one and applies its change to that. Older generations are then deleted. The page is its highest generation.
 * (A writer that stalls, finds a higher generation above the one it inserted, and dies before deleting its own
 * leaves a stale copy that no index entry may name any more; the next rewrite of the page deletes it, and the next
 * KEK rotation rewrites every page under the old epoch.)
 */
export interface KeyPageDoc {
  _id: string;
  page: string;
  gen: number;
  tenant: string;
  epoch: number;
  ids: string[];
  wrapped: string[];
  createdAt: Date;
}

/**
 * An index entry: the record `member` has (or had) a key in `inPage`. In the vault's collection, with no key (and no
 * `page`, which only a page's own documents carry).
 */
export interface KeyIndexDoc {
  _id: string;
  tenant: string;
  member: string;
  inPage: string;
}

/**
 * At most this many keys per page: a page of about 35 KB, what an erasure of one of its records rewrites. A read of a
 * thousand records written in batches reads four or more pages.
 */
export const PAGE_KEYS = 256;

/** Rewrites of one page that lose the race this many times in a row give up (the caller's retry starts again). */
const MAX_ATTEMPTS = 64;

export const newKeyPageId = () => `kp_${randomBytes(16).toString('hex')}`;
const generationId = (page: string, gen: number) => `${page}.${gen}`;

/** What a rewrite leaves in the page; null when the page needs no change. */
export type PageChange = (latest: KeyPageDoc) => Promise<Pick<KeyPageDoc, 'ids' | 'wrapped' | 'epoch'> | null>;

export class PageContended extends Error {
  constructor(page: string) {
    super(`key page ${page} kept changing under ${MAX_ATTEMPTS} rewrites`);
    this.name = 'PageContended';
  }
}

export interface KeyPages {
  ensureIndexes(): Promise<void>;
  /** Stores a new page (generation 0) of the tenant's keys; returns its id. */
  insert(tenant: string, epoch: number, ids: readonly string[], wrapped: readonly string[]): Promise<string>;
  /** The pages' current generations (the tenant's only), by page. */
  latest(tenant: string, pages: readonly string[]): Promise<Map<string, KeyPageDoc>>;
  /**
   * For each id, the tenant's pages of which any generation holds a key for it (an id sealed twice, by writes in two
   * processes, has a key in two pages), read from the pages themselves. Ids with none are absent.
   */
  holding(tenant: string, ids: readonly string[]): Promise<Map<string, string[]>>;
  /**
   * Rewrites every page holding a key of these records without it, then deletes their index entries. Returns the ids
   * that had a key in a page. Idempotent.
   */
  remove(tenant: string, ids: readonly string[]): Promise<Set<string>>;
  /**
   * Applies `change` to the page's current generation as its next generation, retrying on the generation a racing
   * writer made, then deletes the older ones. Returns the generation changed and what it became (null: no change).
   */
  rewrite(page: string, change: PageChange): Promise<{ from: KeyPageDoc; to: KeyPageDoc | null } | null>;
}

export function createKeyPages(pages: Collection<KeyPageDoc>, clock: () => number): KeyPages {
  const entries = pages as unknown as Collection<KeyIndexDoc>;
  const generations = (page: string) => pages.find({ page }).toArray();
  const highest = (docs: readonly KeyPageDoc[]) =>
    docs.reduce<KeyPageDoc | null>((top, d) => (top === null || d.gen > top.gen ? d : top), null);

  const rewrite: KeyPages['rewrite'] = async (page, change) => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const docs = await generations(page);
      const current = highest(docs);
      if (!current) return null;
      const next = await change(current);
      if (!next) {
        // Left by a writer that stopped between its insert and its clean-up: older generations are copies.
        if (docs.length > 1) await pages.deleteMany({ page, gen: { $lt: current.gen } });
        return { from: current, to: null };
      }
      const doc: KeyPageDoc = {
        ...current,
        ...next,
        _id: generationId(page, current.gen + 1),
        gen: current.gen + 1,
        createdAt: new Date(clock()),
      };
      try {
        await pages.insertOne(doc);
      } catch (error) {
        if (isDuplicateKey(error)) continue;
        throw error;
      }
      // The insert can succeed on a generation number already passed and cleaned up (a writer that read a page,
      // stalled, and wrote after two others): a higher generation then exists, and this one is a stale copy.
      const after = await pages.find({ page }, { projection: { gen: 1 } }).toArray();
      if (after.some((d) => d.gen > doc.gen)) {
        await pages.deleteOne({ _id: doc._id });
        continue;
      }
      await pages.deleteMany({ page, gen: { $lt: doc.gen } });
      return { from: current, to: doc };
    }
    throw new PageContended(page);
  };

  /** Every generation of each page (the tenant's only): what the pages hold, not what the index says. */
  const generationsOf = async (tenant: string, wanted: readonly string[]) => {
    const read = await mapBounded(wanted, 8, async (page) => ({
      page,
      docs: (await generations(page)).filter((d) => d.tenant === tenant),
    }));
    return new Map(read.map(({ page, docs }) => [page, docs]));
  };

  /** The tenant's index entries for the ids, every generation of the pages they name, and what those hold. */
  const locate = async (tenant: string, ids: readonly string[]) => {
    const wanted = new Set(ids);
    const named = (await mapBounded([...wanted], 16, (member) => entries.find({ member, tenant }).toArray()))
      .flat()
      .filter((e) => e.tenant === tenant);
    const byPage = await generationsOf(tenant, [...new Set(named.map((e) => e.inPage))]);
    const held = new Map<string, string[]>();
    for (const [page, docs] of byPage)
      for (const id of new Set(docs.flatMap((d) => d.ids)))
        if (wanted.has(id)) held.set(id, [...(held.get(id) ?? []), page]);
    return { entries: named, held };
  };

  return {
    async ensureIndexes() {
      await pages.createIndex({ page: 1 });
      await entries.createIndex({ member: 1 });
    },
    async insert(tenant, epoch, ids, wrapped) {
      const page = newKeyPageId();
      // The index first: a page whose insert fails leaves entries naming nothing; the other way round, keys no
      // erasure could find.
      await entries.insertMany(ids.map((member, i) => ({ _id: `${page}#${i}`, tenant, member, inPage: page })));
      await pages.insertOne({
        _id: generationId(page, 0),
        page,
        gen: 0,
        tenant,
        epoch,
        ids: [...ids],
        wrapped: [...wrapped],
        createdAt: new Date(clock()),
      });
      return page;
    },
    async latest(tenant, wanted) {
      const out = new Map<string, KeyPageDoc>();
      const read = await mapBounded([...new Set(wanted)], 8, async (page) => highest(await generations(page)));
      for (const doc of read) if (doc && doc.tenant === tenant) out.set(doc.page, doc);
      return out;
    },
    async holding(tenant, ids) {
      return (await locate(tenant, ids)).held;
    },
    async remove(tenant, ids) {
      const doomed = new Set(ids);
      const { entries: found, held } = await locate(tenant, ids);
      await mapBounded([...new Set([...held.values()].flat())], 4, (page) =>
        rewrite(page, async (latest) => {
          const keep = latest.ids.flatMap((id, i) => (doomed.has(id) ? [] : [i]));
          if (keep.length === latest.ids.length) return null;
          return {
            epoch: latest.epoch,
            ids: keep.map((i) => latest.ids[i]!),
            wrapped: keep.map((i) => latest.wrapped[i]!),
          };
        }),
      );
      // The entries go once no generation of their page holds the key. An entry whose page is not there at all is
      // kept: its writer may be about to insert the page.
      const now = await generationsOf(tenant, [...new Set(found.map((e) => e.inPage))]);
      await mapBounded(found, 16, async (entry) => {
        const docs = now.get(entry.inPage) ?? [];
        if (docs.length > 0 && !docs.some((d) => d.ids.includes(entry.member)))
          await entries.deleteOne({ _id: entry._id });
      });
      return new Set(held.keys());
    },
    rewrite,
  };
}
