import type { Collection, Document, Filter, Sort } from 'mongodb';

/** Where a page ended: the sort field's value and the id of its last document (ids break ties). */
export interface PageKey {
  at: Date;
  id: string;
}

/** One page of a list, and where the next one starts (null when this one is the last). */
export interface Page<T> {
  items: T[];
  next: PageKey | null;
}

/**
 * A page of `filter` in (`field`, `_id`) order after `after`: a keyset page, so a page costs the same however deep
 * it is and a document written between two pages neither repeats nor hides one. Reads one document more than
 * `limit` to know whether another page follows.
 */
export async function keysetPage<T extends Document & { _id: string }>(
  collection: Collection<T>,
  filter: Filter<T>,
  field: keyof T & string,
  order: 1 | -1,
  limit: number,
  after: PageKey | null,
): Promise<Page<T>> {
  // A range on the sort field alone, from the last page's value inclusive: the local server scans the whole
  // collection for an `$or`. Documents that share that value and were already shown (id not beyond the last one's)
  // are dropped here; the read grows until past them (ties on a timestamp are few).
  const beyond = (id: string) => (order === 1 ? id > after!.id : id < after!.id);
  const query = after ? { $and: [filter, { [field]: { [order === 1 ? '$gte' : '$lte']: after.at } }] } : filter;
  for (let read = limit + 1; ; read *= 2) {
    const found = (await collection
      .find(query as Filter<T>)
      .sort({ [field]: order, _id: order } as Sort)
      .limit(read)
      .toArray()) as T[];
    const fresh = after
      ? found.filter((d) => (d[field] as Date).getTime() !== after.at.getTime() || beyond(d._id))
      : found;
    // Enough past the ties, or nothing more to read.
    if (fresh.length > limit || found.length < read) {
      const items = fresh.slice(0, limit);
      const last = items[items.length - 1];
      return { items, next: fresh.length > limit && last ? { at: last[field] as Date, id: last._id } : null };
    }
  }
}
