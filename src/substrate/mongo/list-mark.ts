/**
 * Adds one value to a list field of many documents so that it stays added: the local server writes a whole document
 * back on every update, so an update computed from a read taken before this one can land after it and drop the
 * value (a legal hold's read restriction, a correction mark). Each round adds the value where it is missing, lets
 * the caller settle what else the round may have disturbed, and reads the field back; it ends when every document
 * that still exists carries the value.
 */
import type { Collection, UpdateFilter } from 'mongodb';
import { findByIds } from './bounded-scan.js';
import { mapBounded } from './collections.js';

export const LIST_MARK_ROUNDS = 10;

/** Returns how many documents carry the value at the end (documents gone meanwhile are not counted). */
export async function addToListUntilKept<T extends { _id: string; tenant: string }>(
  collection: Collection<T>,
  tenant: string,
  ids: readonly string[],
  field: keyof T & string,
  value: string,
  what: string,
  afterWrite?: (ids: string[]) => Promise<void>,
): Promise<number> {
  let pending = [...new Set(ids)];
  let kept = 0;
  const update = { $addToSet: { [field]: value } } as unknown as UpdateFilter<T>;
  for (let round = 0; pending.length > 0; round++) {
    if (round === LIST_MARK_ROUNDS) throw new Error(`${pending.length} documents kept losing their ${what}`);
    await mapBounded(pending, 32, (id) => collection.updateOne({ _id: id, tenant } as never, update));
    if (afterWrite) await afterWrite(pending);
    const rows = await findByIds(collection, tenant, pending, { projection: { [field]: 1 } });
    const missing = rows
      .filter((r) => !(((r as Record<string, unknown>)[field] as string[] | undefined) ?? []).includes(value))
      .map((r) => r._id);
    kept += rows.length - missing.length;
    pending = missing;
  }
  return kept;
}
