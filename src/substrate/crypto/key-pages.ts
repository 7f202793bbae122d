import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import { isDuplicateKey, mapBounded } from '../mongo/collections.js';

/**
 * A page of data keys: the keys of records sealed together (a written batch), each wrapped on its own under the
 * page's KEK epoch, in one document. `ids[i]`'s key is `wrapped[i]`. Kept in the vault's collection beside the
 * per-record key documents written before pages (which have no `page`).
 *
 * A page is never updated in place. On the local server an update reads the whole document and writes it back, so
 * two concurrent rewrites of one page would lose one of them, and a lost destruction brings a destroyed key back.
 * Instead every change inserts the page's next generation (`<page>.<gen>`): the insert of a generation's unique id
 * is the arbiter, so of two writers that read the same generation exactly one extends it, and the other reads the
 * new one and applies its change to that. Older generations are then deleted. The page is its highest generation.
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
 * A page holds as many keys as fit its record ids in this many bytes (counted as each id's UTF-8 length plus 8): about
 * 46 keys of records with 36-character ids, a page of about 6 KB. The bound is the index: the local server keeps the
 * whole `ids` array as one entry of a b-tree index, which refuses entries past 2 704 bytes. An erasure rewrites the
 * pages of its records, so small pages also keep that rewrite small.
 */
export const PAGE_ID_BYTES = 2048;

/** The ids cut into pages, in order: each page's ids fit `PAGE_ID_BYTES`, and every page holds at least one. */
export function cutIntoPages(ids: readonly string[]): string[][] {
  const out: string[][] = [];
  let page: string[] = [];
  let bytes = 0;
  for (const id of ids) {
    const size = Buffer.byteLength(id) + 8;
    if (page.length > 0 && bytes + size > PAGE_ID_BYTES) {
      out.push(page);
      page = [];
      bytes = 0;
    }
    page.push(id);
    bytes += size;
  }
  if (page.length > 0) out.push(page);
  return out;
}

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
   * processes, has a key in two pages). Ids with none are absent.
   */
  holding(tenant: string, ids: readonly string[]): Promise<Map<string, string[]>>;
  /**
   * Applies `change` to the page's current generation as its next generation, retrying on the generation a racing
   * writer made, then deletes the older ones. Returns the generation changed and what it became (null: no change).
   */
  rewrite(page: string, change: PageChange): Promise<{ from: KeyPageDoc; to: KeyPageDoc | null } | null>;
}

export function createKeyPages(pages: Collection<KeyPageDoc>, clock: () => number): KeyPages {
  const generations = (page: string) => pages.find({ page }).toArray();
  const highest = (docs: readonly KeyPageDoc[]) =>
    docs.reduce<KeyPageDoc | null>((top, d) => (top === null || d.gen > top.gen ? d : top), null);

  return {
    async ensureIndexes() {
      await pages.createIndex({ page: 1 });
      // Multikey: the local server answers an equality on an array field from a GIN index (one lookup per id).
      await pages.createIndex({ ids: 1 });
    },
    async insert(tenant, epoch, ids, wrapped) {
      const page = newKeyPageId();
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
      const out = new Map<string, string[]>();
      const found = await mapBounded([...new Set(ids)], 16, async (id) => ({
        id,
        docs: await pages.find({ ids: id, tenant }, { projection: { page: 1, tenant: 1 } }).toArray(),
      }));
      for (const { id, docs } of found) {
        const held = [...new Set(docs.filter((d) => d.tenant === tenant).map((d) => d.page))];
        if (held.length > 0) out.set(id, held);
      }
      return out;
    },
    async rewrite(page, change) {
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
    },
  };
}
