/**
 * The guarded status moves of memory records: each move from a record's version is owned by the one insert of its
 * guard that succeeds, then written to the row and settled; a lost claim is finished forward from its winner's guard.
 */
import type { MemoryStatus } from '../../shared/lifecycle.js';
import { DomainError, ErrorType } from '../../shared/errors.js';
import type { MemoryRecord } from '../model/records.js';
import { findByIds } from '../mongo/bounded-scan.js';
import { duplicateKeysOnly, findOwn, isDuplicateKey, mapBounded, ownRow } from '../mongo/collections.js';
import { guardIdOf, type TransitionGuard } from './deletion-marks.js';
import type { MemoryStoreContext } from './memory-store-context.js';
import type { MoveFrom } from './memory-store.port.js';

/** Guards per `insertMany`. */
export const GUARD_CHUNK = 1000;
/** Rounds of `settle` before it gives up on rows that other writers keep rewriting. */
const SETTLE_ROUNDS = 10;

/** What one claim-and-apply of many moves did: how many moved, which to read again, which moved and how. */
export interface ClaimOutcome {
  moved: number;
  retry: string[];
  movedIds: string[];
  finishedIds: string[];
}

/** Writes a move to the row, if the row is still at the version the move is from. */
export function applyMove(
  ctx: MemoryStoreContext,
  record: MoveFrom,
  to: MemoryStatus,
  reason: string | null,
  patch: Record<string, unknown>,
) {
  return ctx.memories.updateOne(
    { ...ownRow<MemoryRecord>(record.tenant, record._id), version: record.version },
    { $set: { status: to, statusReason: reason, updatedAt: new Date(), version: record.version + 1, ...patch } },
  );
}

/**
 * The local server (FerretDB 1.x) updates a document by reading it, then writing the whole document back by `_id`,
 * with nothing held in between: a write made from an older read can land after a newer guarded move and put the row
 * back to the version before it (the filter and the `$set` do not help, both were applied to the older read). So
 * every writer of a row reads it again after its write and, while a guard claims the row's version, makes that move
 * again. The writer of the last write to land then sees the final row, so no claimed move stays undone.
 */
export async function settle(ctx: MemoryStoreContext, tenant: string, ids: readonly string[]): Promise<void> {
  const { memories, guards } = ctx;
  let pending = [...new Set(ids)];
  for (let round = 0; pending.length > 0; round++) {
    if (round === SETTLE_ROUNDS)
      throw new DomainError(ErrorType.Contended, `${pending.length} memories kept losing their moves to other writes`);
    // Point lookups, never a pass over the tenant: the rows just moved are a small part of a large tenant (a sweep's
    // page of 1 000 in 12 000 rows: a pass gave up after its budget, then looked them up anyway, 5.5–8.5 s against
    // 2.7–3.9 s for the lookups alone).
    const rows = await findByIds(memories, tenant, pending, { projection: { version: 1, status: 1 }, scan: false });
    const claimed = new Map(
      (await findByIds(guards, tenant, rows.map(guardIdOf), { scan: false })).map((g) => [g._id, g]),
    );
    const behind = rows.filter((row) => claimed.has(guardIdOf(row)));
    await mapBounded(behind, 32, (row) => {
      const guard = claimed.get(guardIdOf(row))!;
      return applyMove(ctx, row, guard.to, guard.reason, guard.patch ?? {});
    });
    pending = behind.map((row) => row._id);
  }
}

/**
 * Moves many records at once with the same guard as `transition`: one `insertMany` (unordered) of the
 * (id, version) guards per chunk, where a duplicate key on an item means another mover owns that version.
 * An owned move is applied; a lost one is finished forward from its winner's guard, and counts as ours
 * when the winner was an earlier attempt of this same move. Records to read again and retry are returned.
 */
export async function claimAndApply(
  ctx: MemoryStoreContext,
  tenant: string,
  records: readonly MoveFrom[],
  to: MemoryStatus,
  reason: string,
  patch: Record<string, unknown> = {},
  rows: 'now' | 'at-purge' = 'now',
): Promise<ClaimOutcome> {
  return ctx.marks.inFlight(tenant, () => claimAndApplyInFlight(ctx, tenant, records, to, reason, patch, rows));
}

async function claimAndApplyInFlight(
  ctx: MemoryStoreContext,
  tenant: string,
  records: readonly MoveFrom[],
  to: MemoryStatus,
  reason: string,
  patch: Record<string, unknown>,
  rows: 'now' | 'at-purge',
): Promise<ClaimOutcome> {
  const { memories, guards } = ctx;
  const at = new Date();
  const claims = records.map((record) => ({
    record,
    guard: {
      _id: guardIdOf(record),
      tenant,
      from: record.status,
      to,
      reason,
      at,
      ...(Object.keys(patch).length > 0 ? { patch } : {}),
    } satisfies TransitionGuard,
  }));
  const lost = new Set<number>();
  for (let i = 0; i < claims.length; i += GUARD_CHUNK) {
    const chunk = claims.slice(i, i + GUARD_CHUNK);
    for (const index of await insertGuards(
      ctx,
      chunk.map((c) => c.guard),
    ))
      lost.add(i + index);
  }
  const written: string[] = [];
  const write = async (record: MoveFrom, move: Pick<TransitionGuard, 'to' | 'reason' | 'patch'>) => {
    const applied = await applyMove(ctx, record, move.to, move.reason, move.patch ?? {});
    if (applied.matchedCount === 1) written.push(record._id);
    return applied;
  };
  const results = await mapBounded(
    claims.map((_, i) => i),
    32,
    async (i): Promise<'moved' | 'finished' | 'retry'> => {
      const { record, guard } = claims[i]!;
      if (!lost.has(i)) {
        // The row is purged next: the guard alone says the move was made (see `markDeleted`).
        if (rows === 'at-purge') return 'moved';
        const applied = await write(record, guard);
        if (applied.matchedCount === 1) return 'moved';
        // Nothing matched: the record left `version` since it was read. Only a move claimed by this guard can take
        // it from there (every version bump is a guarded move), so a loser finished this move for us, with the
        // patch its guard records. Read it to be sure rather than count a move that may not be there.
        const now = await memories.findOne({ _id: record._id }, { projection: { version: 1 } });
        return now === null || now.version > record.version ? 'finished' : 'retry';
      }
      const winner = await guards.findOne({ _id: guard._id });
      if (!winner) throw new Error(`memory ${record._id}: transition guard lost its winner`);
      const same = winner.to === to && winner.reason === reason;
      // An earlier attempt of this same marking claimed it: its row, too, waits for the purge.
      if (same && rows === 'at-purge') return 'finished';
      // The winner may have crashed before applying its move: finish it (recover forward).
      await write(record, winner);
      return same ? 'finished' : 'retry';
    },
  );
  await settle(ctx, tenant, written);
  return {
    moved: results.filter((r) => r !== 'retry').length,
    retry: claims.filter((_, i) => results[i] === 'retry').map((c) => c.record._id),
    movedIds: claims.filter((_, i) => results[i] !== 'retry').map((c) => c.record._id),
    // Moves finished forward from an earlier mover's guard: they carry its status and patch, not necessarily `patch`.
    finishedIds: claims.filter((_, i) => results[i] === 'finished').map((c) => c.record._id),
  };
}

/** One guarded move from the version `record` was read at (see `transition`). */
async function claimOne(
  ctx: MemoryStoreContext,
  record: MemoryRecord,
  from: MemoryStatus,
  to: MemoryStatus,
  reason: string | null,
  patch: Partial<Pick<MemoryRecord, 'validTo'>>,
): Promise<boolean> {
  const { guards } = ctx;
  const { _id: id, tenant } = record;
  // The local server does not make a conditional update atomic under concurrency, but a unique _id is:
  // the one insert of (id, version) that succeeds owns the move from that version.
  const guard: TransitionGuard = {
    _id: `${id}:${record.version}`,
    tenant,
    from,
    to,
    reason,
    at: new Date(),
    ...(Object.keys(patch).length > 0 ? { patch } : {}),
  };
  try {
    await guards.insertOne(guard);
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    const winner = await guards.findOne({ _id: guard._id });
    if (!winner) throw error;
    // The winner may have crashed before applying its move: finish it (recover forward).
    await applyMove(ctx, record, winner.to, winner.reason, winner.patch ?? {});
    await settle(ctx, tenant, [id]);
    return winner.to === to && winner.reason === reason;
  }
  await applyMove(ctx, record, to, reason, patch);
  await settle(ctx, tenant, [id]);
  return true;
}

/** Inserts guards unordered; returns the indexes (within `docs`) that another mover already holds. */
async function insertGuards(ctx: MemoryStoreContext, docs: TransitionGuard[]): Promise<number[]> {
  try {
    await ctx.guards.insertMany(docs, { ordered: false });
    return [];
  } catch (error) {
    const writeErrors = duplicateKeysOnly(error);
    if (writeErrors === null) throw error;
    return writeErrors;
  }
}

export async function transition(
  ctx: MemoryStoreContext,
  tenant: string,
  id: string,
  from: MemoryStatus,
  to: MemoryStatus,
  reason: string | null,
  patch: Partial<Pick<MemoryRecord, 'validTo'>> = {},
): Promise<boolean> {
  // The row as written, not as it stands: a claimed move still unwritten is finished forward by the claim below.
  const record = await findOwn(ctx.memories, tenant, id);
  if (!record || record.status !== from) return false;
  return ctx.marks.inFlight(tenant, () => claimOne(ctx, record, from, to, reason, patch));
}

export async function transitionMany(
  ctx: MemoryStoreContext,
  tenant: string,
  records: readonly MoveFrom[],
  to: MemoryStatus,
  reason: string,
  patch?: Record<string, unknown>,
): Promise<{ moved: string[]; retry: string[]; unpatched: string[] }> {
  const mine = records.filter((r) => r.tenant === tenant);
  if (mine.length === 0) return { moved: [], retry: [], unpatched: [] };
  const outcome = await claimAndApply(ctx, tenant, mine, to, reason, patch);
  return { moved: outcome.movedIds, retry: outcome.retry, unpatched: outcome.finishedIds };
}

export async function statusBeforeMove(ctx: MemoryStoreContext, id: string, version: number) {
  return (await ctx.guards.findOne({ _id: `${id}:${version - 1}` }))?.from ?? null;
}
