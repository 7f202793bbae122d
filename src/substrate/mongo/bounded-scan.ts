import type { Collection, Document, Filter } from 'mongodb';
import { findOwn, mapBounded } from './collections.js';
import type { WrittenTogether } from '../model/written-together.js';

/**
 * Documents a tenant's cursor can read for the price of one point lookup. Measured on the local FerretDB (2 cores,
 * warm): a `_id` lookup costs ≈ 0.47 ms at 32 in flight, a document streamed by a tenant-equality cursor ≈ 0.1 ms.
 * Kept below the measured 4.7 so that a scan is only chosen where it clearly wins.
 */
export const SCAN_DOCS_PER_LOOKUP = 4;
/** Below this many ids the lookups are cheap in absolute terms: no scan is tried. */
export const SCAN_MIN_IDS = 256;
const SCAN_BATCH = 2000;

/**
 * Streams `filter` (a tenant-equality filter the server serves from its index) and hands every document to
 * `visit`, giving up once more than `budget` documents have been read. Returns whether the whole result was read
 * (`visit` may also end it early by returning `false`, which counts as complete).
 *
 * The point: the local server reads every document for `$in`/`$or`, so a set of ids is fetched by one lookup per
 * id — unless the set is a large part of the tenant, where one pass over the tenant costs a fraction of that. The
 * budget makes the choice without knowing the tenant's size: a scan that would cost more than the lookups stops
 * at their price, so the worst case is twice the lookups, never a full read of a large tenant.
 */
export async function scanWithin<T extends Document>(
  collection: Collection<T>,
  filter: Filter<T>,
  budget: number,
  visit: (doc: T) => boolean | void,
  projection?: Document,
): Promise<boolean> {
  const cursor = collection.find(filter, { batchSize: SCAN_BATCH, ...(projection ? { projection } : {}) });
  let read = 0;
  try {
    for await (const doc of cursor) {
      if (++read > budget) return false;
      if (visit(doc as T) === false) return true;
    }
    return true;
  } finally {
    await cursor.close();
  }
}

/**
 * The tenant's documents with these ids, in the order of `ids` (missing and foreign ids absent): a bounded scan of
 * the tenant when the set is large, then a lookup per id for whatever the scan did not settle.
 */
export async function findByIds<T extends { _id: string; tenant: string }>(
  collection: Collection<T>,
  tenant: string,
  ids: readonly string[],
  options: {
    concurrency?: number;
    scan?: boolean;
    projection?: Document;
    /**
     * Narrows the scan to the part of the tenant that holds these ids (equality on an indexed field). Documents
     * outside it are still found, by lookup: it decides how much is read, never what is returned.
     */
    within?: Document;
    /**
     * An indexed equality the ids were written under together (an admission's stage): they are read by it in one
     * query whatever their number, since it holds about as many documents as there are ids (the budget still bounds
     * it). Ids outside it are found by lookup.
     */
    batch?: Document;
  } = {},
): Promise<T[]> {
  const unique = [...new Set(ids)];
  const found = new Map<string, T>();
  let settled = false;
  // A projection keeps `_id`, which keys what is returned, and `tenant`, which the documents' type promises.
  const projection = options.projection ? { ...options.projection, _id: 1, tenant: 1 } : undefined;
  const part = options.batch ?? options.within;
  if (options.scan !== false && unique.length > 0 && (options.batch !== undefined || unique.length >= SCAN_MIN_IDS)) {
    const wanted = new Set(unique);
    settled = await scanWithin(
      collection,
      { ...part, tenant } as Filter<T>,
      unique.length * SCAN_DOCS_PER_LOOKUP,
      (doc) => {
        if (!wanted.has(doc._id)) return;
        found.set(doc._id, doc);
        if (found.size === wanted.size) return false;
      },
      projection,
    );
    // A whole pass over part of the tenant proves nothing about the ids it did not meet.
    if (part && found.size < wanted.size) settled = false;
  }
  if (!settled) {
    const rest = unique.filter((id) => !found.has(id));
    const looked = await mapBounded(
      rest,
      options.concurrency ?? 32,
      (id) => findOwn(collection, tenant, id, projection ? { projection } : {}) as Promise<T | null>,
    );
    for (const doc of looked) if (doc) found.set(doc._id, doc);
  }
  return unique.flatMap((id) => {
    const doc = found.get(id);
    return doc ? [doc] : [];
  });
}

/**
 * The tenant's documents whose `field` (a string, or an array of strings) holds one of `values`: one equality lookup
 * per value, or a bounded pass over the tenant when the values are many (the local server scans for `$in`).
 * `projection` must keep `_id` and `field`. Each document once.
 */
export async function findMatching<T extends { _id: string }>(
  collection: Collection<T>,
  tenant: string,
  field: string,
  values: readonly string[],
  options: { concurrency?: number; projection?: Document } = {},
): Promise<T[]> {
  const unique = [...new Set(values)];
  const found = new Map<string, T>();
  let settled = false;
  if (unique.length >= SCAN_MIN_IDS) {
    const wanted = new Set(unique);
    settled = await scanWithin(
      collection,
      { tenant } as unknown as Filter<T>,
      unique.length * SCAN_DOCS_PER_LOOKUP,
      (doc) => {
        const value = (doc as Record<string, unknown>)[field];
        const hit = Array.isArray(value) ? value.some((v) => wanted.has(v as string)) : wanted.has(value as string);
        if (hit) found.set(doc._id, doc);
      },
      options.projection,
    );
  }
  if (!settled) {
    const looked = await mapBounded(unique, options.concurrency ?? 16, (value) =>
      collection
        .find(
          { tenant, [field]: value } as unknown as Filter<T>,
          options.projection ? { projection: options.projection } : {},
        )
        .toArray(),
    );
    for (const doc of looked.flat()) found.set(doc._id, doc as T);
  }
  return [...found.values()];
}

/** `findByIds`'s options for ids the caller says one stage wrote: its records read by the stage, in one query. */
export function writtenBy(written: WrittenTogether | undefined): { batch?: Document } {
  return written?.stageId ? { batch: { stageId: written.stageId } } : {};
}
