/**
 * Marks and flags on memory records that are not status moves: a legal hold, a contest of accuracy, staleness after
 * a rectification, and qualifier drift. Holds, contests and staleness are marks of their own beside the row.
 */
import type { UpdateFilter } from 'mongodb';
import type { MemoryRecord } from '../model/records.js';
import { findByIds } from '../mongo/bounded-scan.js';
import { ownRow } from '../mongo/collections.js';
import type { RecordMarkKind } from '../mongo/record-marks.js';
import { settle } from './memory-moves.js';
import type { MemoryStoreContext } from './memory-store-context.js';

/** Adds a mark to those of `ids` that are the tenant's records. */
async function markPresent(
  ctx: MemoryStoreContext,
  tenant: string,
  ids: readonly string[],
  kind: RecordMarkKind,
  key: string,
  at?: Date,
): Promise<void> {
  const present = await findByIds(ctx.memories, tenant, ids, { projection: { _id: 1 } });
  await ctx.recordMarks.add(
    tenant,
    present.map((r) => r._id),
    kind,
    key,
    at,
  );
}

export async function restrict(
  ctx: MemoryStoreContext,
  tenant: string,
  ids: readonly string[],
  holdId: string,
): Promise<void> {
  // A mark of its own: no row rewrite from an older read can drop it (see `record-marks.ts`).
  await markPresent(ctx, tenant, ids, 'hold', holdId);
}

export async function flagQualifierDrift(
  ctx: MemoryStoreContext,
  tenant: string,
  id: string,
  drift: { from: string; dropped: string[] },
): Promise<void> {
  await ctx.memories.updateOne(ownRow<MemoryRecord>(tenant, id), { $set: { qualifierDrift: drift } });
  await settle(ctx, tenant, [id]);
}

export async function contest(
  ctx: MemoryStoreContext,
  tenant: string,
  id: string,
  requestId: string,
  open: boolean,
): Promise<boolean> {
  const { memories, recordMarks } = ctx;
  const row = await memories.findOne(ownRow<MemoryRecord>(tenant, id), { projection: { contestedBy: 1 } });
  if (!row) return false;
  if (open) {
    await recordMarks.add(tenant, [id], 'contest', requestId);
  } else {
    await recordMarks.remove(tenant, [id], 'contest', requestId);
    // A row written before marks had their own documents may carry the mark itself.
    if ((row.contestedBy ?? []).includes(requestId)) {
      await memories.updateOne(ownRow<MemoryRecord>(tenant, id), {
        $pull: { contestedBy: requestId },
      } as unknown as UpdateFilter<MemoryRecord>);
      await settle(ctx, tenant, [id]);
    }
  }
  return true;
}

export async function flagStale(
  ctx: MemoryStoreContext,
  tenant: string,
  ids: readonly string[],
  stale: { because: string; since: Date },
): Promise<void> {
  await markPresent(ctx, tenant, ids, 'stale', stale.because, stale.since);
}
