/** Inserts of memory records, sealed under each record's own data key and idempotent by id. */
import type { MemoryRecord } from '../model/records.js';
import { duplicateKeysOnly, isDuplicateKey } from '../mongo/collections.js';
import { GUARD_CHUNK } from './memory-moves.js';
import type { MemoryStoreContext } from './memory-store-context.js';

export async function insert(ctx: MemoryStoreContext, record: MemoryRecord): Promise<'created' | 'exists'> {
  try {
    await ctx.memories.insertOne((await ctx.cipher.sealAll([record]))[0]!);
    return 'created';
  } catch (error) {
    if (isDuplicateKey(error)) return 'exists';
    throw error;
  }
}

export async function insertMany(
  ctx: MemoryStoreContext,
  records: readonly MemoryRecord[],
): Promise<('created' | 'exists')[]> {
  const outcomes: ('created' | 'exists')[] = records.map(() => 'created');
  for (let i = 0; i < records.length; i += GUARD_CHUNK) {
    const chunk = records.slice(i, i + GUARD_CHUNK);
    if (chunk.length === 0) continue;
    try {
      await ctx.memories.insertMany(await ctx.cipher.sealAll(chunk), { ordered: false });
    } catch (error) {
      const duplicates = duplicateKeysOnly(error);
      if (duplicates === null) throw error;
      for (const index of duplicates) outcomes[i + index] = 'exists';
    }
  }
  return outcomes;
}
