import type { Db } from 'mongodb';
import type { ContentCipher } from '../../substrate/crypto/content-cipher.js';
import { Collections, isDuplicateKey } from '../../substrate/mongo/collections.js';
import type { AccessPackage, AccessRequest, Selector } from './access-request.js';

/** The request as stored: its clear selector sealed under a key of its own, shredded with the package. */
interface StoredAccessRequest extends AccessRequest {
  selectorSealed: string;
}

/** A package: sealed under its own key; the ids of the records it holds are kept clear, for erasures to find it. */
interface StoredPackage {
  _id: string;
  tenant: string;
  recordIds: string[];
  body: string;
  createdAt: Date;
}

const selectorKey = (id: string) => `access-selector:${id}`;
const packageKey = (id: string) => `access-package:${id}`;

export interface AccessStore {
  ensureIndexes(): Promise<void>;
  /** Stores a new request; filing the same id again returns the stored one and `created: false`. */
  create(request: AccessRequest, selector: Selector): Promise<{ request: AccessRequest; created: boolean }>;
  get(tenant: string, id: string): Promise<AccessRequest | null>;
  /** The clear selector, while the request is open; null once its key is shredded. */
  selectorOf(tenant: string, id: string): Promise<Selector | null>;
  update(tenant: string, id: string, patch: Partial<Omit<AccessRequest, '_id' | 'tenant'>>): Promise<void>;
  countDownload(tenant: string, id: string): Promise<void>;
  /** Stores the signed package, sealed; idempotent (a retry replaces it with the same ids). */
  putPackage(tenant: string, id: string, pkg: AccessPackage, recordIds: readonly string[]): Promise<void>;
  /** The package, opened; null when it was never built or is erased. */
  getPackage(tenant: string, id: string): Promise<AccessPackage | null>;
  /** Shreds the package's and the selector's keys, then deletes the package. Idempotent. */
  erasePackage(tenant: string, id: string): Promise<boolean>;
  /** Erases every package of the tenant that holds any of these records (an erasure reaches its copies here). */
  erasePackagesHolding(tenant: string, recordIds: readonly string[]): Promise<number>;
}

export function createMongoAccessStore(db: Db, cipher: ContentCipher): AccessStore {
  const requests = db.collection<StoredAccessRequest>(Collections.accessRequests);
  const packages = db.collection<StoredPackage>(Collections.accessPackages);
  const strip = ({ selectorSealed: _sealed, ...request }: StoredAccessRequest): AccessRequest => request;
  const erasePackage = async (tenant: string, id: string) => {
    await cipher.shred(tenant, [packageKey(id), selectorKey(id)]);
    const { deletedCount } = await packages.deleteOne({ _id: id, tenant });
    return deletedCount > 0;
  };
  return {
    async ensureIndexes() {
      await requests.createIndex({ tenant: 1, receivedAt: -1 });
      await packages.createIndex({ tenant: 1 });
    },
    async create(request, selector) {
      const [sealed] = await cipher.sealAll([
        { _id: selectorKey(request._id), tenant: request.tenant, content: JSON.stringify(selector) },
      ]);
      try {
        await requests.insertOne({ ...request, selectorSealed: sealed!.content });
        return { request, created: true };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const existing = await requests.findOne({ _id: request._id });
        if (!existing || existing.tenant !== request.tenant) throw error;
        return { request: strip(existing), created: false };
      }
    },
    async get(tenant, id) {
      const found = await requests.findOne({ _id: id });
      return found && found.tenant === tenant ? strip(found) : null;
    },
    async selectorOf(tenant, id) {
      const found = await requests.findOne({ _id: id });
      if (!found || found.tenant !== tenant) return null;
      const opened = await cipher.openOne({ _id: selectorKey(id), tenant, content: found.selectorSealed });
      return opened ? (JSON.parse(opened.content) as Selector) : null;
    },
    async update(tenant, id, patch) {
      await requests.updateOne({ _id: id, tenant }, { $set: { ...patch, updatedAt: new Date() } });
    },
    async countDownload(tenant, id) {
      await requests.updateOne({ _id: id, tenant }, { $inc: { downloads: 1 } });
    },
    async putPackage(tenant, id, pkg, recordIds) {
      const [sealed] = await cipher.sealAll([{ _id: packageKey(id), tenant, content: JSON.stringify(pkg) }]);
      await packages.replaceOne(
        { _id: id },
        { tenant, recordIds: [...recordIds], body: sealed!.content, createdAt: new Date() },
        { upsert: true },
      );
    },
    async getPackage(tenant, id) {
      const found = await packages.findOne({ _id: id });
      if (!found || found.tenant !== tenant) return null;
      const opened = await cipher.openOne({ _id: packageKey(id), tenant, content: found.body });
      return opened ? (JSON.parse(opened.content) as AccessPackage) : null;
    },
    erasePackage,
    async erasePackagesHolding(tenant, recordIds) {
      if (recordIds.length === 0) return 0;
      const wanted = new Set(recordIds);
      // A tenant holds few packages at a time (each lives for its delivery window): one pass, filtered here.
      const holding = await packages
        .find({ tenant }, { projection: { _id: 1, recordIds: 1 } })
        .toArray()
        .then((docs) => docs.filter((d) => d.recordIds.some((r) => wanted.has(r))));
      let erased = 0;
      for (const doc of holding) if (await erasePackage(tenant, doc._id)) erased++;
      return erased;
    },
  };
}
