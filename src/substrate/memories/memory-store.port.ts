/** The memory store's port: what the rest of Lethe may ask of memory records, and the shapes it answers with. */
import type { MemoryStatus } from '../../shared/lifecycle.js';
import type { MemoryRecord } from '../model/records.js';
import type { WrittenTogether } from '../model/written-together.js';
import type { Page, PageKey } from '../mongo/keyset-page.js';

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
  getMany(tenant: string, ids: readonly string[], written?: WrittenTogether): Promise<MemoryRecord[]>;
  /** `getMany` without the content: what an erasure decides on and tombstones (a fraction of each record's bytes). */
  factsOf(tenant: string, ids: readonly string[], written?: WrittenTogether): Promise<MemoryFacts[]>;
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

/** A record's fields that scope, hold and tombstone decisions need: no content. */
export type MemoryFacts = Pick<
  MemoryRecord,
  '_id' | 'tenant' | 'version' | 'status' | 'statusReason' | 'subjects' | 'namespace' | 'contentHash' | 'hashKeyId'
>;

/** What a move needs to know of a record: which version it moves from, and from which status. */
export type MoveFrom = Pick<MemoryRecord, '_id' | 'tenant' | 'version' | 'status'>;
