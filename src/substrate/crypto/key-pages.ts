import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import { isDuplicateKey, mapBounded } from '../mongo/collections.js';
import { findMatching } from '../mongo/bounded-scan.js';

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
 * new one and applies its change to that. The page is its highest generation.
 *
 * An older generation is not deleted but replaced by its tomb (`KeyPageTomb`: its id, no key), which keeps its id
 * taken. Otherwise a writer that read generation n, stalled while others took the page to n + 2 and deleted n + 1,
 * could insert n + 1 again from its stale read, holding keys destroyed since; if it died before noticing the higher
 * generation, that copy would stay where no index entry leads the certificate's probe. With the tomb its insert is
 * a duplicate, and it reads the current generation like any loser of a race. A page left with no key is retired
 * whole: only tombs remain, and readers find no key in it. Tombs a day old are deleted by the next KEK rotation.
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
 * What an older generation is replaced by: its id, kept taken so that no writer inserts that generation again, and
 * when. No key, and no `page` (readers of a page never see it) or `member`.
 */
export interface KeyPageTomb {
  _id: string;
  tombOf: string;
  tenant: string;
  gen: number;
  at: Date;
}

/** Tombs older than this are deleted by a rotation: a writer stalled longer than that is not guarded against. */
export const TOMB_KEEP_MS = 24 * 60 * 60_000;

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

/** What a rewrite did: the generation it read, the one it wrote (null: no change), and whether the page is gone. */
export interface PageRewrite {
  from: KeyPageDoc;
  to: KeyPageDoc | null;
  gone: boolean;
}

/** What `locate` found: the ids' index entries, and for each id the pages holding a key for it. */
export interface Located {
  entries: KeyIndexDoc[];
  held: Map<string, string[]>;
}

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
  /** The tenant's index entries for the ids, and which pages (any generation) hold a key for each. */
  locate(tenant: string, ids: readonly string[]): Promise<Located>;
  /**
   * Rewrites every page holding a key of these records without it, then deletes their index entries. Returns the ids
   * that had a key in a page. Idempotent. `located`: what `locate` found for these ids just before.
   */
  remove(tenant: string, ids: readonly string[], located?: Located): Promise<Set<string>>;
  /**
   * Applies `change` to the page's current generation as its next generation, retrying on the generation a racing
   * writer made, then replaces the older ones by their tombs. A page left with no key is retired whole: it is gone.
   * Null when the page is not there.
   */
  rewrite(page: string, change: PageChange): Promise<PageRewrite | null>;
  /** Deletes the tombs older than `TOMB_KEEP_MS`; returns how many. */
  sweepTombs(): Promise<number>;
}

export function createKeyPages(pages: Collection<KeyPageDoc>, clock: () => number): KeyPages {
  const entries = pages as unknown as Collection<KeyIndexDoc>;
  const tombs = pages as unknown as Collection<KeyPageTomb>;
  const generations = (page: string) => pages.find({ page }).toArray();
  const highest = (docs: readonly KeyPageDoc[]) =>
    docs.reduce<KeyPageDoc | null>((top, d) => (top === null || d.gen > top.gen ? d : top), null);
  const tombOf = (page: string, tenant: string, gen: number): KeyPageTomb => ({
    _id: generationId(page, gen),
    tombOf: page,
    tenant,
    gen,
    at: new Date(clock()),
  });
  /** The generation numbers below `gen`. */
  const below = (docs: readonly { gen: number }[], gen: number) => docs.filter((d) => d.gen < gen).map((d) => d.gen);
  /** Replaces these generations of the page by their tombs (one replaced already is left as it is). */
  const retire = (page: string, tenant: string, gens: readonly number[]) =>
    mapBounded(gens, 4, async (gen) => {
      const { _id, ...tomb } = tombOf(page, tenant, gen);
      await (tombs as Collection<KeyPageTomb & { page?: string }>).replaceOne({ _id, page }, tomb);
    });

  const rewrite: KeyPages['rewrite'] = async (page, change) => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const docs = await generations(page);
      const current = highest(docs);
      if (!current) return null;
      if (current.ids.length === 0) {
        // Emptied by a writer that stopped before retiring it: the page is gone, and so is every copy of it.
        await retire(page, current.tenant, below(docs, current.gen + 1));
        return { from: current, to: null, gone: true };
      }
      const next = await change(current);
      if (!next) {
        // Left by a writer that stopped between its insert and its clean-up: older generations are copies.
        await retire(page, current.tenant, below(docs, current.gen));
        return { from: current, to: null, gone: false };
      }
      const gen = current.gen + 1;
      const doc: KeyPageDoc = { ...current, ...next, _id: generationId(page, gen), gen, createdAt: new Date(clock()) };
      try {
        await pages.insertOne(doc);
      } catch (error) {
        if (isDuplicateKey(error)) continue;
        throw error;
      }
      // Only once a tomb was swept (a day on) can an insert succeed on a generation number already passed: a
      // higher generation then exists, and this one is a stale copy.
      const after = await pages.find({ page }, { projection: { gen: 1 } }).toArray();
      if (after.some((d) => d.gen > gen)) {
        await retire(page, current.tenant, [gen]);
        continue;
      }
      // No key left: this generation goes too, and the page is gone for readers. (Until then, readers read it
      // empty.)
      const gone = doc.ids.length === 0;
      await retire(page, current.tenant, below(after, gone ? gen + 1 : gen));
      return { from: current, to: doc, gone };
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
  const locate = async (tenant: string, ids: readonly string[]): Promise<Located> => {
    const wanted = new Set(ids);
    // One bounded pass over the tenant's entries when the ids are many (an erasure's chunk), else a lookup per id.
    const named = (await findMatching(entries, tenant, 'member', [...wanted])).filter((e) => e.tenant === tenant);
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
      await tombs.createIndex({ tombOf: 1 });
      await entries.createIndex({ member: 1 });
      // A gone page's entries are deleted by their page.
      await entries.createIndex({ inPage: 1 });
    },
    async insert(tenant, epoch, ids, wrapped) {
      const page = newKeyPageId();
      // The index first: a page whose insert fails leaves entries naming nothing; the other way round, keys no
      // erasure could find.
      const named = ids.map((member, i) => ({ _id: `${page}#${i}`, tenant, member, inPage: page }));
      await entries.insertMany(named);
      try {
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
      } catch (error) {
        // No page, no use for its entries: they would name the records for nothing. (If this fails too, they stay,
        // naming no key.)
        await mapBounded(named, 16, (entry) => entries.deleteOne({ _id: entry._id })).catch(() => undefined);
        throw error;
      }
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
    locate,
    async remove(tenant, ids, located) {
      const doomed = new Set(ids);
      const { entries: found, held } = located ?? (await locate(tenant, ids));
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
      // The entries go once no generation of their page holds the key, or the page is gone (only tombs are left). An
      // entry whose page is not there at all is kept: its writer may be about to insert the page.
      const named = [...new Set(found.map((e) => e.inPage))];
      const now = await generationsOf(tenant, named);
      const gone = new Set(
        (
          await mapBounded(
            named.filter((page) => (now.get(page) ?? []).length === 0),
            8,
            async (page) => ((await tombs.countDocuments({ tombOf: page, tenant }, { limit: 1 })) > 0 ? page : null),
          )
        ).filter((page): page is string => page !== null),
      );
      // A gone page's entries all go, whichever records they name: no generation of it holds a key any more, and a
      // page's id is never used again. One delete by equality on the page (an indexed field) each, instead of one
      // per entry: erasing a batch's records empties whole pages.
      await mapBounded([...gone], 4, (page) => entries.deleteMany({ tenant, inPage: page }));
      await mapBounded(
        found.filter((entry) => !gone.has(entry.inPage)),
        16,
        async (entry) => {
          const docs = now.get(entry.inPage) ?? [];
          const holds = docs.some((d) => d.ids.includes(entry.member));
          if (docs.length > 0 && !holds) await entries.deleteOne({ _id: entry._id });
        },
      );
      return new Set(held.keys());
    },
    rewrite,
    async sweepTombs() {
      const cutoff = new Date(clock() - TOMB_KEEP_MS);
      return (await tombs.deleteMany({ tombOf: { $exists: true }, at: { $lt: cutoff } })).deletedCount;
    },
  };
}
