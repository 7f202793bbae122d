import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import type { ContentCipher } from '../../substrate/crypto/content-cipher.js';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { Collections, findOwn, insertOnce, replaceOwn } from '../../substrate/mongo/collections.js';
import type { AccessPackage, AccessRequest, Selector } from './access-request.js';

/** What a request was filed for: its selector, and the subject it answers when the selector names none. */
export interface SealedFiling {
  selector: Selector;
  subjectId: string | null;
}

/** The request as stored: its clear filing sealed under a key of its own, shredded with the package. */
interface StoredAccessRequest extends AccessRequest {
  selectorSealed: string;
}

/**
 * A package is stored as parts of at most `PART_CHARS` characters of its JSON, each sealed under a key of its own
 * (a subject's package can pass a document's size limit), and a head written after them: the number of parts, and
 * the ids of the records it holds in clear, for erasures to find it.
 */
interface StoredPackageHead {
  _id: string;
  tenant: string;
  recordIds: string[];
  parts: number;
  createdAt: Date;
}

/**
 * What an erasure purged, noted before it looks for packages holding it: the records' ids as keyed hashes (an
 * erased id is named only where the certificate and the audit chain keep it).
 */
interface StoredPurgeNote {
  _id: string;
  tenant: string;
  at: Date;
  idHashes: string[];
}

interface StoredPackagePart {
  _id: string;
  tenant: string;
  requestId: string;
  part: number;
  body: string;
}

const PART_CHARS = 1_000_000;
/** Ids per purge note, so that a large erasure's notes stay far below a document's size limit. */
const NOTE_IDS = 20_000;
/** How long a purge note is kept: far longer than any build, so a build never misses one. */
export const PURGE_NOTE_MS = 86_400_000;
const selectorKey = (id: string) => `access-selector:${id}`;
const partId = (id: string, part: number) => `${id}#${part}`;
const partKey = (id: string, part: number) => `access-package:${id}#${part}`;

/** The text in pieces of at most `size` UTF-16 units, never splitting a surrogate pair. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + size, text.length);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff && end - 1 > at) end--;
    out.push(text.slice(at, end));
    at = end;
  }
  return out.length > 0 ? out : [''];
}

export interface AccessStore {
  ensureIndexes(): Promise<void>;
  /**
   * Stores a new request with its selector and the subject it answers (both sealed); filing the same id again
   * returns the stored one and `created: false`.
   */
  create(
    request: AccessRequest,
    selector: Selector,
    subjectId?: string,
  ): Promise<{ request: AccessRequest; created: boolean }>;
  get(tenant: string, id: string): Promise<AccessRequest | null>;
  /** The tenant's requests, newest first. */
  list(tenant: string, limit: number): Promise<AccessRequest[]>;
  /** The requests filed with one of these selector hashes (a subject's, under each live key), newest first. */
  withSelectorHashes(tenant: string, hashes: readonly string[]): Promise<AccessRequest[]>;
  /** The clear selector, while the request is open; null once its key is shredded. */
  selectorOf(tenant: string, id: string): Promise<Selector | null>;
  /** The clear selector and the subject filed beside it (null: none), while the request is open. */
  filingOf(tenant: string, id: string): Promise<SealedFiling | null>;
  update(tenant: string, id: string, patch: Partial<Omit<AccessRequest, '_id' | 'tenant'>>): Promise<void>;
  countDownload(tenant: string, id: string): Promise<void>;
  /** Stores the signed package, sealed; idempotent (a retry replaces it with the same ids). */
  putPackage(tenant: string, id: string, pkg: AccessPackage, recordIds: readonly string[]): Promise<void>;
  /** The package, opened; null when it was never built or is erased. */
  getPackage(tenant: string, id: string): Promise<AccessPackage | null>;
  /** Shreds the package's and the selector's keys, then deletes the package. Idempotent. */
  erasePackage(tenant: string, id: string): Promise<boolean>;
  /** Shreds the package's keys and deletes it, keeping the selector: a build that must start again. Idempotent. */
  discardPackage(tenant: string, id: string): Promise<boolean>;
  /**
   * Erases every package of the tenant that holds any of these records (an erasure reaches its copies here), after
   * noting the ids as purged for the builds that are still reading.
   */
  erasePackagesHolding(tenant: string, recordIds: readonly string[]): Promise<number>;
  /** Of these ids, those an erasure noted as purged at or after `since`. */
  purgedSince(tenant: string, since: Date, recordIds: readonly string[]): Promise<string[]>;
}

export function createMongoAccessStore(db: Db, cipher: ContentCipher, fingerprints: Fingerprinter): AccessStore {
  const requests = db.collection<StoredAccessRequest>(Collections.accessRequests);
  const heads = db.collection<StoredPackageHead>(Collections.accessPackages);
  const parts = db.collection<StoredPackagePart>(Collections.accessPackageParts);
  const notes = db.collection<StoredPurgeNote>(Collections.accessPurgeNotes);
  const noteHashes = (tenant: string, id: string) => fingerprints.all('access-purge-note', tenant, id);
  const strip = ({ selectorSealed: _sealed, ...request }: StoredAccessRequest): AccessRequest => request;
  const removePackage = async (tenant: string, id: string, keys: string[]) => {
    // The parts on record (a build that stopped before its head leaves parts too), their keys first.
    const stored = await parts.find({ tenant, requestId: id }, { projection: { part: 1 } }).toArray();
    await cipher.shred(tenant, [...keys, ...stored.map((p) => partKey(id, p.part))]);
    await parts.deleteMany({ tenant, requestId: id });
    const { deletedCount } = await heads.deleteOne({ _id: id, tenant });
    return deletedCount > 0;
  };
  const erasePackage = (tenant: string, id: string) => removePackage(tenant, id, [selectorKey(id)]);
  const filingOf = async (tenant: string, id: string): Promise<SealedFiling | null> => {
    const found = await findOwn(requests, tenant, id);
    if (!found) return null;
    const opened = await cipher.openOne({ _id: selectorKey(id), tenant, content: found.selectorSealed });
    if (!opened) return null;
    const parsed = JSON.parse(opened.content) as SealedFiling | Selector;
    // Requests filed before the subject was sealed beside the selector hold the selector alone.
    return 'selector' in parsed ? parsed : { selector: parsed, subjectId: null };
  };
  return {
    async ensureIndexes() {
      await requests.createIndex({ tenant: 1, receivedAt: -1 });
      await requests.createIndex({ tenant: 1, selectorHash: 1 });
      await heads.createIndex({ tenant: 1 });
      await parts.createIndex({ tenant: 1, requestId: 1 });
      await notes.createIndex({ tenant: 1, at: 1 });
    },
    async create(request, selector, subjectId) {
      const filing: SealedFiling = { selector, subjectId: subjectId ?? null };
      const [sealed] = await cipher.sealAll([
        { _id: selectorKey(request._id), tenant: request.tenant, content: JSON.stringify(filing) },
      ]);
      const { doc, created } = await insertOnce(requests, { ...request, selectorSealed: sealed!.content });
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
    async withSelectorHashes(tenant, hashes) {
      // One equality per hash: the local server scans for `$in`.
      const found = await Promise.all(
        [...new Set(hashes)].map((selectorHash) => requests.find({ tenant, selectorHash }).toArray()),
      );
      return found
        .flat()
        .sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime())
        .map(strip);
    },
    selectorOf: async (tenant, id) => (await filingOf(tenant, id))?.selector ?? null,
    filingOf,
    async update(tenant, id, patch) {
      await requests.updateOne({ _id: id, tenant }, { $set: { ...patch, updatedAt: new Date() } });
    },
    async countDownload(tenant, id) {
      await requests.updateOne({ _id: id, tenant }, { $inc: { downloads: 1 } });
    },
    async putPackage(tenant, id, pkg, recordIds) {
      const texts = pieces(JSON.stringify(pkg), PART_CHARS);
      const sealed = await cipher.sealAll(texts.map((content, i) => ({ _id: partKey(id, i), tenant, content })));
      for (const [i, part] of sealed.entries())
        await replaceOwn(parts, partId(id, i), { tenant, requestId: id, part: i, body: part.content });
      await replaceOwn(heads, id, { tenant, recordIds: [...recordIds], parts: texts.length, createdAt: new Date() });
    },
    async getPackage(tenant, id) {
      const head = await findOwn(heads, tenant, id);
      if (!head) return null;
      const stored = await parts.find({ tenant, requestId: id }).toArray();
      const wanted = stored.filter((p) => p.part < head.parts).sort((a, b) => a.part - b.part);
      if (wanted.length !== head.parts || wanted.some((p, i) => p.part !== i)) return null;
      const opened = await cipher.openAll(wanted.map((p) => ({ _id: partKey(id, p.part), tenant, content: p.body })));
      // A part whose key is gone: the package is being erased, and reads as erased.
      if (opened.length !== head.parts) return null;
      return JSON.parse(opened.map((p) => p.content).join('')) as AccessPackage;
    },
    erasePackage,
    discardPackage: (tenant, id) => removePackage(tenant, id, []),
    async erasePackagesHolding(tenant, recordIds) {
      if (recordIds.length === 0) return 0;
      // Noted before the heads are read: a build that stores its package after this read finds the note when it
      // checks (see `purgedSince`), and one that stored it before is among the heads read below.
      const at = new Date();
      const hashes = [...new Set(recordIds)].map((id) => noteHashes(tenant, id)[0]!);
      for (let i = 0; i < hashes.length; i += NOTE_IDS)
        await notes.insertOne({ _id: randomUUID(), tenant, at, idHashes: hashes.slice(i, i + NOTE_IDS) });
      await notes.deleteMany({ tenant, at: { $lt: new Date(at.getTime() - PURGE_NOTE_MS) } });
      const wanted = new Set(recordIds);
      // A tenant holds few packages at a time (each lives for its delivery window): one pass, filtered here.
      const holding = await heads
        .find({ tenant }, { projection: { _id: 1, recordIds: 1 } })
        .toArray()
        .then((docs) => docs.filter((d) => d.recordIds.some((r) => wanted.has(r))));
      let erased = 0;
      for (const doc of holding) if (await erasePackage(tenant, doc._id)) erased++;
      return erased;
    },
    async purgedSince(tenant, since, recordIds) {
      const noted = await notes.find({ tenant, at: { $gte: since } }, { projection: { idHashes: 1 } }).toArray();
      if (noted.length === 0) return [];
      const purged = new Set(noted.flatMap((n) => n.idHashes));
      // Under every fingerprint key: a note made just before a key change still matches.
      return recordIds.filter((id) => noteHashes(tenant, id).some((h) => purged.has(h)));
    },
  };
}
