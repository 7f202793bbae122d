/**
 * How memory records leave: marked deleted by guarded moves (under a deletion mark when their rows wait for the
 * purge), purged by id, or withdrawn with their data keys destroyed before their rows.
 */
import { DomainError, ErrorType } from '../../shared/errors.js';
import type { MemoryRecord } from '../model/records.js';
import { mapBounded, ownRow } from '../mongo/collections.js';
import { claimAndApply } from './memory-moves.js';
import { getMany } from './memory-reads.js';
import type { MemoryStoreContext } from './memory-store-context.js';
import type { MoveFrom } from './memory-store.port.js';

/** Rounds of `markDeleted` before it gives up on records that other movers keep moving. */
const MARK_ROUNDS = 5;

export async function markDeleted(
  ctx: MemoryStoreContext,
  tenant: string,
  ids: readonly string[],
  requestId: string,
  known: readonly MoveFrom[] = [],
  options: { rowsAtPurge?: boolean } = {},
): Promise<number> {
  const reason = `erasure:${requestId}`;
  const rows = options.rowsAtPurge ? 'at-purge' : 'now';
  // Opened before any guard is claimed: a read that finds a claimed version must also find the mark.
  if (rows === 'at-purge') await ctx.marks.open(tenant, requestId);
  const wanted = new Set(ids);
  const given = new Map(known.filter((r) => wanted.has(r._id) && r.tenant === tenant).map((r) => [r._id, r]));
  let records: MoveFrom[] = [
    ...given.values(),
    ...(await getMany(
      ctx,
      tenant,
      [...wanted].filter((id) => !given.has(id)),
    )),
  ];
  let moved = 0;
  for (let round = 0; ; round++) {
    // Any live status may move to deleted; a record found deleted after a lost round was moved meanwhile.
    const live = records.filter((r) => r.status !== 'deleted' && r.status !== 'purged');
    if (round > 0) moved += records.length - live.length;
    if (live.length === 0) return moved;
    if (round === MARK_ROUNDS)
      throw new DomainError(
        ErrorType.Contended,
        `${live.length} memories could not be marked deleted under contention`,
      );
    const outcome = await claimAndApply(ctx, tenant, live, 'deleted', reason, {}, rows);
    moved += outcome.moved;
    // A concurrent move (e.g. a review) won some claims: retry those from their current state.
    records = await getMany(ctx, tenant, outcome.retry);
  }
}

export async function closeDeletionMark(ctx: MemoryStoreContext, tenant: string, requestId: string): Promise<void> {
  await ctx.marks.close(tenant, requestId);
}

export async function purge(ctx: MemoryStoreContext, tenant: string, ids: readonly string[]): Promise<number> {
  const results = await mapBounded([...ids], 32, (id) => ctx.memories.deleteOne(ownRow<MemoryRecord>(tenant, id)));
  await ctx.recordMarks.purge(tenant, ids);
  return results.reduce((n, r) => n + r.deletedCount, 0);
}

export async function withdraw(ctx: MemoryStoreContext, tenant: string, ids: readonly string[]): Promise<number> {
  await ctx.cipher.shred(tenant, ids);
  return purge(ctx, tenant, ids);
}
