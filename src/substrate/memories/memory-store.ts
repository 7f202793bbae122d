import type { Collection, Db, UpdateFilter } from 'mongodb';
import type { MemoryStatus } from '../../shared/lifecycle.js';
import type { MemoryRecord } from '../model/records.js';
import type { ContentCipher } from '../crypto/content-cipher.js';
import { findByIds, findMatching } from '../mongo/bounded-scan.js';
import { Collections, findOwn, duplicateKeysOnly, isDuplicateKey, mapBounded } from '../mongo/collections.js';
import { createDeletionMarks, guardIdOf, type TransitionGuard } from './deletion-marks.js';
import { keysetPage, type Page, type PageKey } from '../mongo/keyset-page.js';
import { createRecordMarks } from '../mongo/record-marks.js';

/** Memory records with their governance fields. Status changes are compare-and-set, for workflows only. */
export interface MemoryStore {
  ensureIndexes(): Promise<void>;
  /** Idempotent by id: a retried insert of the same record reports `exists`. */
  insert(record: MemoryRecord): Promise<'created' | 'exists'>;
  /** `insert` for many records: unordered inserts of a thousand; each record's outcome, in order. */
  insertMany(records: readonly MemoryRecord[]): Promise<('created' | 'exists')[]>;
  get(tenant: string, id: string): Promise<MemoryRecord | null>;
  /**
   * Records by id within the tenant, in the order given; missing and foreign ids are absent. Bounded parallel `_id`
   * lookups, or one bounded pass over the tenant when the ids are a large part of it (see `findByIds`).
   */
  getMany(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]>;
  /** `getMany` without the content: what an erasure decides on and tombstones (a fraction of each record's bytes). */
  factsOf(tenant: string, ids: readonly string[]): Promise<MemoryFacts[]>;
  /**
   * The status a record left on the move to `version` (from that move's guard), for a retry that finds the move
   * done and still has to write its audit entry.
   */
  statusBeforeMove(id: string, version: number): Promise<MemoryStatus | null>;
  /** Compare-and-set: moves the record only if it is still in `from`. Returns whether it moved. */
  transition(
    tenant: string,
    id: string,
    from: MemoryStatus,
    to: MemoryStatus,
    reason: string | null,
    patch?: Partial<Pick<MemoryRecord, 'validTo'>>,
  ): Promise<boolean>;
  /**
   * `transition` for many records at once, each from the version and status it was read at: the guards are claimed
   * with one unordered insert per thousand, then each owned move is one conditional update (with `patch`). Returns
   * the ids moved, and those to read again (they changed since they were read, or another mover owns the version).
   * `unpatched`: moved ids finished forward from an earlier attempt's guard, with that guard's patch (none if it
   * recorded none).
   */
  transitionMany(
    tenant: string,
    records: readonly MoveFrom[],
    to: MemoryStatus,
    reason: string,
    patch?: Record<string, unknown>,
  ): Promise<{ moved: string[]; retry: string[]; unpatched: string[] }>;
  idsBySubject(tenant: string, subject: string): Promise<string[]>;
  /** Every record of the tenant that names the subject, in any status, as `getMany` reads it: both in one read. */
  allBySubject(tenant: string, subject: string): Promise<MemoryRecord[]>;
  /** Records of a tenant in a status, oldest first, at most `limit`. */
  listByStatus(tenant: string, status: MemoryStatus, limit: number): Promise<MemoryRecord[]>;
  /**
   * Records of a status, oldest first, a page at a time: `next` follows the rows read, so a page may hold fewer
   * than `limit` (rows an erasure has claimed are left out).
   */
  pageByStatus(tenant: string, status: MemoryStatus, limit: number, after: PageKey | null): Promise<Page<MemoryRecord>>;
  /** The tenant's records in id order after `afterId` (all statuses), for walks over a whole tenant. */
  pageOfTenant(tenant: string, afterId: string | null, limit: number): Promise<MemoryRecord[]>;
  /** Ids of records holding any of these content hashes (a bounded pass over the tenant when they are many). */
  idsByContentHashes(tenant: string, contentHashes: readonly string[]): Promise<string[]>;
  /** Records whose valid time or transaction time starts within [from, to). */
  idsByTime(tenant: string, field: 'validFrom' | 'recordedAt', from: Date, to: Date): Promise<string[]>;
  /**
   * Marks records deleted (from any live status) so that nothing serves them while they are purged. `known`
   * are records of `ids` the caller has just read: the first round starts from them instead of reading again.
   *
   * `rowsAtPurge`: for records the caller purges next (an erasure). Each move is claimed by its guard as always, but
   * the record's row is not rewritten: while the request's deletion mark is open, every read of the tenant's records
   * through this store shows a record whose current version has a `deleted` guard as deleted, and every other mover
   * loses that version to the guard and finishes the move forward. A row update costs the local server as much as
   * a delete (a dozen index entries rewritten), so this halves the erasure's writes. Close the mark with
   * `closeDeletionMark` once the rows are gone.
   */
  markDeleted(
    tenant: string,
    ids: readonly string[],
    requestId: string,
    known?: readonly MoveFrom[],
    options?: { rowsAtPurge?: boolean },
  ): Promise<number>;
  /** Closes a request's deletion mark (its marked records are purged); idempotent. */
  closeDeletionMark(tenant: string, requestId: string): Promise<void>;
  /**
   * Records held by a legal hold: readable only by the legal role until the hold is released. The hold and the marks
   * below are documents of their own beside the row (`record-marks.ts`), never a row rewrite.
   */
  restrict(tenant: string, ids: readonly string[], holdId: string): Promise<void>;
  /** Physically deletes records by id (bounded parallel `_id` deletes). */
  purge(tenant: string, ids: readonly string[]): Promise<number>;
  /**
   * Takes back records a write made and then found fenced by an erasure: their data keys are destroyed first, then
   * their rows deleted. A copy of a row kept anywhere (the WAL, a replica, a backup taken meanwhile) no longer opens,
   * and a crash between the two leaves a row that reads as erased. Idempotent; returns the rows deleted.
   */
  withdraw(tenant: string, ids: readonly string[]): Promise<number>;
  /** Flags a superseding record that dropped qualifiers of the one it replaced (idempotent; not a status move). */
  flagQualifierDrift(tenant: string, id: string, drift: { from: string; dropped: string[] }): Promise<void>;
  /**
   * Marks a record's accuracy contested by a rectification request, or takes the mark back (`open: false`);
   * idempotent, not a status move. False when the record is not there.
   */
  contest(tenant: string, id: string, requestId: string, open: boolean): Promise<boolean>;
  /** Flags records derived from a rectified one as stale (idempotent; the first flag stays). */
  flagStale(tenant: string, ids: readonly string[], stale: { because: string; since: Date }): Promise<void>;
  /**
   * Finishes forward every claimed move a concurrent write undid on these records' rows. Every write of a memory row
   * made outside this store (the retention queue's slot moves) must be followed by it; the store's own writes are.
   */
  settle(tenant: string, ids: readonly string[]): Promise<void>;
}

/** Rounds of `markDeleted` before it gives up on records that other movers keep moving. */
const MARK_ROUNDS = 5;
/** Guards per `insertMany`. */
const GUARD_CHUNK = 1000;
/** Rounds of `settle` before it gives up on rows that other writers keep rewriting. */
const SETTLE_ROUNDS = 10;

/** A record's fields that scope, hold and tombstone decisions need: no content. */
export type MemoryFacts = Pick<
  MemoryRecord,
  '_id' | 'tenant' | 'version' | 'status' | 'statusReason' | 'subjects' | 'namespace' | 'contentHash' | 'hashKeyId'
>;
const FACT_FIELDS = {
  _id: 1,
  tenant: 1,
  version: 1,
  status: 1,
  statusReason: 1,
  subjects: 1,
  namespace: 1,
  contentHash: 1,
  hashKeyId: 1,
};

/** What a move needs to know of a record: which version it moves from, and from which status. */
export type MoveFrom = Pick<MemoryRecord, '_id' | 'tenant' | 'version' | 'status'>;

/**
 * Memory records in MongoDB. Content is sealed under each record's own data key before it is written and opened when
 * read; a record whose key is destroyed reads as erased (absent), even before its row is purged.
 */
export function createMongoMemoryStore(db: Db, cipher: ContentCipher): MemoryStore {
  const memories = db.collection<MemoryRecord>(Collections.memories);
  const guards = db.collection<TransitionGuard>(Collections.transitions);
  const marks = createDeletionMarks(db);
  const recordMarks = createRecordMarks(db);
  const effective = marks.standing;
  const apply = (record: MoveFrom, to: MemoryStatus, reason: string | null, patch: Record<string, unknown>) =>
    memories.updateOne(
      { _id: record._id, tenant: record.tenant, version: record.version },
      { $set: { status: to, statusReason: reason, updatedAt: new Date(), version: record.version + 1, ...patch } },
    );
  /** Records as every content read sees them: claimed moves applied, marks laid over, content opened. */
  const readable = async (tenant: string, found: MemoryRecord[]) =>
    cipher.openAll(await recordMarks.overlay(tenant, await effective(tenant, found)));
  const getMany = async (tenant: string, ids: readonly string[]) => {
    const found = await findByIds(memories, tenant, ids);
    return readable(tenant, found);
  };
  /**
   * The local server (FerretDB 1.x) updates a document by reading it, then writing the whole document back by `_id`,
   * with nothing held in between: a write made from an older read can land after a newer guarded move and put the row
   * back to the version before it (the filter and the `$set` do not help, both were applied to the older read). So
   * every writer of a row reads it again after its write and, while a guard claims the row's version, makes that move
   * again. The writer of the last write to land then sees the final row, so no claimed move stays undone.
   */
  const settle = async (tenant: string, ids: readonly string[]) => {
    let pending = [...new Set(ids)];
    for (let round = 0; pending.length > 0; round++) {
      if (round === SETTLE_ROUNDS)
        throw new Error(`${pending.length} memories kept losing their moves to other writes`);
      const rows = await findByIds(memories, tenant, pending, { projection: { version: 1, status: 1 } });
      const claimed = new Map(
        (await findByIds(guards, tenant, rows.map(guardIdOf), { scan: false })).map((g) => [g._id, g]),
      );
      const behind = rows.filter((row) => claimed.has(guardIdOf(row)));
      await mapBounded(behind, 32, (row) => {
        const guard = claimed.get(guardIdOf(row))!;
        return apply(row, guard.to, guard.reason, guard.patch ?? {});
      });
      pending = behind.map((row) => row._id);
    }
  };
  /**
   * Moves many records at once with the same guard as `transition`: one `insertMany` (unordered) of the
   * (id, version) guards per chunk, where a duplicate key on an item means another mover owns that version.
   * An owned move is applied; a lost one is finished forward from its winner's guard, and counts as ours
   * when the winner was an earlier attempt of this same move. Records to read again and retry are returned.
   */
  const claimAndApply = async (
    tenant: string,
    records: readonly MoveFrom[],
    to: MemoryStatus,
    reason: string,
    patch: Record<string, unknown> = {},
    rows: 'now' | 'at-purge' = 'now',
  ): Promise<{ moved: number; retry: string[]; movedIds: string[]; finishedIds: string[] }> =>
    marks.inFlight(tenant, () => claimAndApplyInFlight(tenant, records, to, reason, patch, rows));
  const claimAndApplyInFlight = async (
    tenant: string,
    records: readonly MoveFrom[],
    to: MemoryStatus,
    reason: string,
    patch: Record<string, unknown>,
    rows: 'now' | 'at-purge',
  ): Promise<{ moved: number; retry: string[]; movedIds: string[]; finishedIds: string[] }> => {
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
      for (const index of await insertGuards(chunk.map((c) => c.guard))) lost.add(i + index);
    }
    const written: string[] = [];
    const write = async (record: MoveFrom, move: Pick<TransitionGuard, 'to' | 'reason' | 'patch'>) => {
      const applied = await apply(record, move.to, move.reason, move.patch ?? {});
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
    await settle(tenant, written);
    return {
      moved: results.filter((r) => r !== 'retry').length,
      retry: claims.filter((_, i) => results[i] === 'retry').map((c) => c.record._id),
      movedIds: claims.filter((_, i) => results[i] !== 'retry').map((c) => c.record._id),
      // Moves finished forward from an earlier mover's guard: they carry its status and patch, not necessarily `patch`.
      finishedIds: claims.filter((_, i) => results[i] === 'finished').map((c) => c.record._id),
    };
  };

  /** One guarded move from the version `record` was read at (see `transition`). */
  const claimOne = async (
    record: MemoryRecord,
    from: MemoryStatus,
    to: MemoryStatus,
    reason: string | null,
    patch: Partial<Pick<MemoryRecord, 'validTo'>>,
  ): Promise<boolean> => {
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
      await apply(record, winner.to, winner.reason, winner.patch ?? {});
      await settle(tenant, [id]);
      return winner.to === to && winner.reason === reason;
    }
    await apply(record, to, reason, patch);
    await settle(tenant, [id]);
    return true;
  };

  /** Inserts guards unordered; returns the indexes (within `docs`) that another mover already holds. */
  const insertGuards = async (docs: TransitionGuard[]): Promise<number[]> => {
    try {
      await guards.insertMany(docs, { ordered: false });
      return [];
    } catch (error) {
      const writeErrors = duplicateKeysOnly(error);
      if (writeErrors === null) throw error;
      return writeErrors;
    }
  };

  const store: MemoryStore = {
    async ensureIndexes() {
      await memories.createIndex({ tenant: 1, subjects: 1 });
      await memories.createIndex({ tenant: 1, status: 1 });
      await memories.createIndex({ tenant: 1, expiresAt: 1 });
      await memories.createIndex({ tenant: 1, contentHash: 1 });
      await marks.ensureIndexes();
      await recordMarks.ensureIndexes();
    },
    async insert(record) {
      try {
        await memories.insertOne((await cipher.sealAll([record]))[0]!);
        return 'created';
      } catch (error) {
        if (isDuplicateKey(error)) return 'exists';
        throw error;
      }
    },
    async insertMany(records) {
      const outcomes: ('created' | 'exists')[] = records.map(() => 'created');
      for (let i = 0; i < records.length; i += GUARD_CHUNK) {
        const chunk = records.slice(i, i + GUARD_CHUNK);
        if (chunk.length === 0) continue;
        try {
          await memories.insertMany(await cipher.sealAll(chunk), { ordered: false });
        } catch (error) {
          const duplicates = duplicateKeysOnly(error);
          if (duplicates === null) throw error;
          for (const index of duplicates) outcomes[i + index] = 'exists';
        }
      }
      return outcomes;
    },
    async get(tenant, id) {
      const record = await findOwn(memories, tenant, id);
      return record ? ((await readable(tenant, [record]))[0] ?? null) : null;
    },
    getMany,
    async factsOf(tenant, ids) {
      const found = await findByIds(memories as unknown as Collection<MemoryFacts>, tenant, ids, {
        projection: FACT_FIELDS,
      });
      return effective(tenant, found);
    },
    async statusBeforeMove(id, version) {
      return (await guards.findOne({ _id: `${id}:${version - 1}` }))?.from ?? null;
    },
    async transition(tenant, id, from, to, reason, patch = {}) {
      // The row as written, not as it stands: a claimed move still unwritten is finished forward by the claim below.
      const record = await findOwn(memories, tenant, id);
      if (!record || record.status !== from) return false;
      return marks.inFlight(tenant, () => claimOne(record, from, to, reason, patch));
    },
    async transitionMany(tenant, records, to, reason, patch = {}) {
      const mine = records.filter((r) => r.tenant === tenant);
      if (mine.length === 0) return { moved: [], retry: [], unpatched: [] };
      const outcome = await claimAndApply(tenant, mine, to, reason, patch);
      return { moved: outcome.movedIds, retry: outcome.retry, unpatched: outcome.finishedIds };
    },
    async idsBySubject(tenant, subject) {
      const docs = await memories.find({ tenant, subjects: subject }, { projection: { _id: 1 } }).toArray();
      return docs.map((d) => d._id);
    },
    async allBySubject(tenant, subject) {
      return readable(tenant, await memories.find({ tenant, subjects: subject }).toArray());
    },
    async listByStatus(tenant, status, limit) {
      const found = await memories.find({ tenant, status }).sort({ recordedAt: 1 }).limit(limit).toArray();
      // A record claimed by an erasure still says its old status in its row until the purge removes it.
      return (await readable(tenant, found)).filter((r) => r.status === status);
    },
    async pageByStatus(tenant, status, limit, after) {
      const page = await keysetPage(memories, { tenant, status }, 'recordedAt', 1, limit, after);
      return { items: (await readable(tenant, page.items)).filter((r) => r.status === status), next: page.next };
    },
    async pageOfTenant(tenant, afterId, limit) {
      const filter = afterId === null ? { tenant } : { tenant, _id: { $gt: afterId } };
      return readable(tenant, await memories.find(filter).sort({ _id: 1 }).limit(limit).toArray());
    },
    async idsByContentHashes(tenant, contentHashes) {
      const docs = await findMatching(memories, tenant, 'contentHash', contentHashes, {
        projection: { _id: 1, contentHash: 1 },
      });
      return docs.map((d) => d._id);
    },
    async idsByTime(tenant, field, from, to) {
      // A range is not pushed down on the local server (a scan per tenant); selectors by time are rare.
      const docs = await memories
        .find({ tenant, [field]: { $gte: from, $lt: to } }, { projection: { _id: 1 } })
        .toArray();
      return docs.map((d) => d._id);
    },
    async markDeleted(tenant, ids, requestId, known = [], options = {}) {
      const reason = `erasure:${requestId}`;
      const rows = options.rowsAtPurge ? 'at-purge' : 'now';
      // Opened before any guard is claimed: a read that finds a claimed version must also find the mark.
      if (rows === 'at-purge') await marks.open(tenant, requestId);
      const wanted = new Set(ids);
      const given = new Map(known.filter((r) => wanted.has(r._id) && r.tenant === tenant).map((r) => [r._id, r]));
      let records: MoveFrom[] = [
        ...given.values(),
        ...(await getMany(
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
          throw new Error(`${live.length} memories could not be marked deleted under contention`);
        const outcome = await claimAndApply(tenant, live, 'deleted', reason, {}, rows);
        moved += outcome.moved;
        // A concurrent move (e.g. a review) won some claims: retry those from their current state.
        records = await getMany(tenant, outcome.retry);
      }
    },
    async closeDeletionMark(tenant, requestId) {
      await marks.close(tenant, requestId);
    },
    async restrict(tenant, ids, holdId) {
      // A mark of its own: no row rewrite from an older read can drop it (see `record-marks.ts`).
      const present = await findByIds(memories, tenant, ids, { projection: { _id: 1 } });
      await recordMarks.add(
        tenant,
        present.map((r) => r._id),
        'hold',
        holdId,
      );
    },
    async flagQualifierDrift(tenant, id, drift) {
      await memories.updateOne({ _id: id, tenant }, { $set: { qualifierDrift: drift } });
      await settle(tenant, [id]);
    },
    async contest(tenant, id, requestId, open) {
      const row = await memories.findOne({ _id: id, tenant }, { projection: { contestedBy: 1 } });
      if (!row) return false;
      if (open) {
        await recordMarks.add(tenant, [id], 'contest', requestId);
      } else {
        await recordMarks.remove(tenant, [id], 'contest', requestId);
        // A row written before marks had their own documents may carry the mark itself.
        if ((row.contestedBy ?? []).includes(requestId)) {
          await memories.updateOne({ _id: id, tenant }, {
            $pull: { contestedBy: requestId },
          } as unknown as UpdateFilter<MemoryRecord>);
          await settle(tenant, [id]);
        }
      }
      return true;
    },
    async flagStale(tenant, ids, stale) {
      const present = await findByIds(memories, tenant, ids, { projection: { _id: 1 } });
      await recordMarks.add(
        tenant,
        present.map((r) => r._id),
        'stale',
        stale.because,
        stale.since,
      );
    },
    settle,
    async purge(tenant, ids) {
      const results = await mapBounded([...ids], 32, (id) => memories.deleteOne({ _id: id, tenant }));
      await recordMarks.purge(tenant, ids);
      return results.reduce((n, r) => n + r.deletedCount, 0);
    },
    async withdraw(tenant, ids) {
      await cipher.shred(tenant, ids);
      return store.purge(tenant, ids);
    },
  };
  return store;
}
