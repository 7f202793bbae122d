import type { Db } from 'mongodb';
import type { ContentCipher } from '../../substrate/crypto/content-cipher.js';
import { Collections, findOwn, insertOnce } from '../../substrate/mongo/collections.js';
import { findMatching } from '../../substrate/mongo/bounded-scan.js';
import type { RectificationRequest, RectificationState } from './rectification.js';

/** The request as stored: the corrected content sealed under a key of its own, shredded once applied or void. */
interface StoredRectification extends RectificationRequest {
  contentSealed: string | null;
}

const contentKey = (id: string) => `rectification-content:${id}`;

export interface RectificationStore {
  ensureIndexes(): Promise<void>;
  /** Stores a new request with its corrected content; the same id again returns the stored one, `created: false`. */
  create(request: RectificationRequest, content: string): Promise<{ request: RectificationRequest; created: boolean }>;
  get(tenant: string, id: string): Promise<RectificationRequest | null>;
  /** The tenant's requests, newest first. */
  list(tenant: string, limit: number): Promise<RectificationRequest[]>;
  /** The requests that correct one of these memories, newest first. */
  forMemories(tenant: string, memoryIds: readonly string[]): Promise<RectificationRequest[]>;
  /** The corrected content; null once applied, rejected or void (its key is shredded). */
  contentOf(tenant: string, id: string): Promise<string | null>;
  /**
   * Moves an open request to a decided state with the decision's fields (compare-and-set on `awaiting-review`);
   * false when it was no longer open.
   */
  close(
    tenant: string,
    id: string,
    to: Exclude<RectificationState, 'awaiting-review'>,
    patch: Partial<Omit<RectificationRequest, '_id' | 'tenant' | 'state'>>,
  ): Promise<boolean>;
  /**
   * Extends an open request's due date from `from` months of extension to `to` (compare-and-set on both; read back,
   * as the local server's conditional update is a read and a write); false when another extension or a decision
   * came first.
   */
  extend(tenant: string, id: string, from: number, to: number, dueAt: Date, reasonHash: string): Promise<boolean>;
  update(tenant: string, id: string, patch: Partial<Omit<RectificationRequest, '_id' | 'tenant'>>): Promise<void>;
  /** Shreds the corrected content's key and drops the sealed copy; idempotent. */
  forgetContent(tenant: string, id: string): Promise<void>;
  /**
   * An erasure reached these records: open requests over them become void and their corrected content is shredded
   * (it is about the same subject). Returns the requests voided.
   */
  voidHolding(tenant: string, memoryIds: readonly string[]): Promise<string[]>;
}

export function createMongoRectificationStore(db: Db, cipher: ContentCipher): RectificationStore {
  const requests = db.collection<StoredRectification>(Collections.rectifications);
  const strip = ({ contentSealed: _sealed, ...request }: StoredRectification): RectificationRequest => request;
  const forgetContent = async (tenant: string, id: string) => {
    await cipher.shred(tenant, [contentKey(id)]);
    await requests.updateOne({ _id: id, tenant }, { $set: { contentSealed: null } });
  };
  const close: RectificationStore['close'] = async (tenant, id, to, patch) => {
    const { modifiedCount } = await requests.updateOne(
      { _id: id, tenant, state: 'awaiting-review' },
      { $set: { ...patch, state: to, updatedAt: new Date() } },
    );
    if (modifiedCount === 0) return false;
    // The local server's conditional update is a read and a write: read back which decision landed.
    const now = await requests.findOne({ _id: id, tenant }, { projection: { state: 1, decidedBy: 1 } });
    return now?.state === to && (patch.decidedBy === undefined || now.decidedBy === patch.decidedBy);
  };
  return {
    async ensureIndexes() {
      await requests.createIndex({ tenant: 1, receivedAt: -1 });
      await requests.createIndex({ tenant: 1, memoryId: 1 });
    },
    async create(request, content) {
      const [sealed] = await cipher.sealAll([{ _id: contentKey(request._id), tenant: request.tenant, content }]);
      const { doc, created } = await insertOnce(requests, { ...request, contentSealed: sealed!.content });
      return { request: created ? request : strip(doc), created };
    },
    async get(tenant, id) {
      const found = await findOwn(requests, tenant, id);
      return found ? strip(found) : null;
    },
    async list(tenant, limit) {
      const found = await requests.find({ tenant }).sort({ receivedAt: -1 }).limit(limit).toArray();
      return found.map(strip);
    },
    async forMemories(tenant, memoryIds) {
      const found = await findMatching(requests, tenant, 'memoryId', memoryIds);
      return found.sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime()).map(strip);
    },
    async contentOf(tenant, id) {
      const found = await findOwn(requests, tenant, id);
      if (!found?.contentSealed) return null;
      const opened = await cipher.openOne({ _id: contentKey(id), tenant, content: found.contentSealed });
      return opened?.content ?? null;
    },
    close,
    async extend(tenant, id, from, to, dueAt, reasonHash) {
      // Plain equalities: the local server answers them from the `_id` lookup, where an `$or` would scan.
      const filter = { _id: id, tenant, state: 'awaiting-review' as const, extensionMonths: from };
      const { modifiedCount } = await requests.updateOne(filter, {
        $set: { extensionMonths: to, extensionReasonHash: reasonHash, dueAt, updatedAt: new Date() },
      });
      if (modifiedCount === 0) return false;
      const now = await requests.findOne(
        { _id: id, tenant },
        { projection: { extensionMonths: 1, extensionReasonHash: 1 } },
      );
      return now?.extensionMonths === to && now.extensionReasonHash === reasonHash;
    },
    async update(tenant, id, patch) {
      await requests.updateOne({ _id: id, tenant }, { $set: { ...patch, updatedAt: new Date() } });
    },
    forgetContent,
    async voidHolding(tenant, memoryIds) {
      if (memoryIds.length === 0) return [];
      const wanted = new Set(memoryIds);
      // Few requests are open at a time: one pass over the open ones, filtered here (a `$in` would scan too).
      const open = await requests
        .find({ tenant, state: 'awaiting-review' }, { projection: { _id: 1, memoryId: 1 } })
        .toArray();
      const voided: string[] = [];
      for (const r of open.filter((o) => wanted.has(o.memoryId))) {
        await close(tenant, r._id, 'void', {});
        await forgetContent(tenant, r._id);
        // Its hash too: the correction is about a subject just erased, and the hash would confirm a guess of it to
        // whoever holds the key. A re-filing under the request's key is refused as void instead of compared.
        await requests.updateOne({ _id: r._id, tenant }, { $set: { contentHash: '' }, $unset: { hashKeyId: '' } });
        voided.push(r._id);
      }
      return voided;
    },
  };
}
