/**
 * The MongoDB memory store: builds the context its parts share and composes the reads, inserts, guarded moves,
 * deletions and flags into the `MemoryStore` port.
 */
import type { Db } from 'mongodb';
import type { ContentCipher } from '../crypto/content-cipher.js';
import type { MemoryRecord } from '../model/records.js';
import { Collections } from '../mongo/collections.js';
import { createRecordMarks } from '../mongo/record-marks.js';
import { createDeletionMarks, type TransitionGuard } from './deletion-marks.js';
import { closeDeletionMark, markDeleted, purge, withdraw } from './memory-deletion.js';
import { contest, flagQualifierDrift, flagStale, restrict } from './memory-flags.js';
import { insert, insertMany } from './memory-inserts.js';
import { settle, statusBeforeMove, transition, transitionMany } from './memory-moves.js';
import {
  allBySubject,
  factsOf,
  get,
  getMany,
  idsByContentHashes,
  idsBySubject,
  idsByTime,
  listByStatus,
  pageByStatus,
  pageOfTenant,
} from './memory-reads.js';
import type { MemoryStoreContext } from './memory-store-context.js';
import type { MemoryStore } from './memory-store.port.js';

export type { MemoryFacts, MemoryStore, MoveFrom } from './memory-store.port.js';

/**
 * Memory records in MongoDB. Content is sealed under each record's own data key before it is written and opened when
 * read; a record whose key is destroyed reads as erased (absent), even before its row is purged.
 */
export function createMongoMemoryStore(db: Db, cipher: ContentCipher): MemoryStore {
  const ctx: MemoryStoreContext = {
    memories: db.collection<MemoryRecord>(Collections.memories),
    guards: db.collection<TransitionGuard>(Collections.transitions),
    marks: createDeletionMarks(db),
    recordMarks: createRecordMarks(db),
    cipher,
  };
  return {
    async ensureIndexes() {
      await ctx.memories.createIndex({ tenant: 1, subjects: 1 });
      await ctx.memories.createIndex({ tenant: 1, status: 1 });
      await ctx.memories.createIndex({ tenant: 1, expiresAt: 1 });
      await ctx.memories.createIndex({ tenant: 1, contentHash: 1 });
      await ctx.memories.createIndex({ tenant: 1, stageId: 1 });
      await ctx.marks.ensureIndexes();
      await ctx.recordMarks.ensureIndexes();
    },
    insert: (record) => insert(ctx, record),
    insertMany: (records) => insertMany(ctx, records),
    get: (tenant, id) => get(ctx, tenant, id),
    getMany: (tenant, ids, written) => getMany(ctx, tenant, ids, written),
    factsOf: (tenant, ids, written) => factsOf(ctx, tenant, ids, written),
    idsBySubject: (tenant, subject) => idsBySubject(ctx, tenant, subject),
    allBySubject: (tenant, subject) => allBySubject(ctx, tenant, subject),
    listByStatus: (tenant, status, limit) => listByStatus(ctx, tenant, status, limit),
    pageByStatus: (tenant, status, limit, after) => pageByStatus(ctx, tenant, status, limit, after),
    pageOfTenant: (tenant, afterId, limit) => pageOfTenant(ctx, tenant, afterId, limit),
    idsByContentHashes: (tenant, contentHashes) => idsByContentHashes(ctx, tenant, contentHashes),
    idsByTime: (tenant, field, from, to) => idsByTime(ctx, tenant, field, from, to),
    statusBeforeMove: (id, version) => statusBeforeMove(ctx, id, version),
    transition: (tenant, id, from, to, reason, patch) => transition(ctx, tenant, id, from, to, reason, patch),
    transitionMany: (tenant, records, to, reason, patch) => transitionMany(ctx, tenant, records, to, reason, patch),
    settle: (tenant, ids) => settle(ctx, tenant, ids),
    markDeleted: (tenant, ids, requestId, known, options) => markDeleted(ctx, tenant, ids, requestId, known, options),
    closeDeletionMark: (tenant, requestId) => closeDeletionMark(ctx, tenant, requestId),
    purge: (tenant, ids) => purge(ctx, tenant, ids),
    withdraw: (tenant, ids) => withdraw(ctx, tenant, ids),
    restrict: (tenant, ids, holdId) => restrict(ctx, tenant, ids, holdId),
    flagStale: (tenant, ids, stale) => flagStale(ctx, tenant, ids, stale),
    contest: (tenant, id, requestId, open) => contest(ctx, tenant, id, requestId, open),
    flagQualifierDrift: (tenant, id, drift) => flagQualifierDrift(ctx, tenant, id, drift),
  };
}
