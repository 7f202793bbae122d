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
  const beyond = order === 1 ? '$gt' : '$lt';
  const query = after
    ? {
        $and: [
          filter,
          { $or: [{ [field]: { [beyond]: after.at } }, { [field]: after.at, _id: { [beyond]: after.id } }] },
        ],
      }
    : filter;
  const found = (await collection
    .find(query as Filter<T>)
    .sort({ [field]: order, _id: order } as Sort)
    .limit(limit + 1)
    .toArray()) as T[];
  const items = found.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next: found.length > limit && last ? { at: last[field] as Date, id: last._id } : null };
}
