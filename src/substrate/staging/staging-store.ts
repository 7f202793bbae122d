import type { Db } from 'mongodb';
import { type TenantMacs } from '../fingerprint.js';
import { sha256Hex } from '../../shared/sha256.js';
import { eventIdOf, idempotencyKeyOf } from '../events/event-store.js';
import { storedDigestForms } from '../content-hash.js';
import { Collections, findOwn, mapBounded, ownRow, replaceOwn } from '../mongo/collections.js';
import type { ContentCipher } from '../crypto/content-cipher.js';
import { isSealed } from '../crypto/content-seal.js';

/**
 * Validated writes parked between the API and their workflow, so that content never travels through
 * workflow inputs or histories (invariant 9): workflows carry the stage id only.
 */
export interface StagedWrite<T> {
  _id: string;
  tenant: string;
  principal: string;
  body: T;
  createdAt: Date;
}

/** What an erasure names: a stage that mentions any of these is erased with the subject's data. */
export interface StageMentions {
  subjects: readonly string[];
  /** Record ids: memory ids, cited event ids and parent ids, and the ids staged events will have. */
  ids: readonly string[];
  /** Content hashes as the erased rows stored them (keyed, or plain on a row written before keying). */
  contentHashes: readonly string[];
}

export interface StagingStore {
  ensureIndexes(): Promise<void>;
  put<T>(write: StagedWrite<T>): Promise<void>;
  get<T>(tenant: string, id: string): Promise<StagedWrite<T> | null>;
  discard(tenant: string, id: string): Promise<void>;
  /** Removes the tenant's stages that mention any of the subjects, ids or content hashes; returns how many. */
  eraseMentioning(tenant: string, mentions: StageMentions): Promise<number>;
}

/**
 * Whether a staged body mentions any of the targets, read by field name rather than by the shape of one kind
 * of write: `subjects`, `id`, `eventIds`, `parentIds` and `content` wherever they are, and the id an event
 * (`source`, `externalId`, `content`) will be recorded under. Pure.
 */
export function stageMentions(macs: TenantMacs, tenant: string, body: unknown, mentions: StageMentions): boolean {
  const subjects = new Set(mentions.subjects);
  const ids = new Set(mentions.ids);
  const hashes = new Set(mentions.contentHashes);
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  const visit = (value: unknown): boolean => {
    if (Array.isArray(value)) return value.some(visit);
    if (value === null || typeof value !== 'object') return false;
    const o = value as Record<string, unknown>;
    if (strings(o.subjects).some((s) => subjects.has(s))) return true;
    if (typeof o.id === 'string' && ids.has(o.id)) return true;
    if ([...strings(o.eventIds), ...strings(o.parentIds)].some((id) => ids.has(id))) return true;
    if (typeof o.content === 'string' && (hashes.size > 0 || ids.size > 0)) {
      const digest = sha256Hex(o.content);
      if (storedDigestForms(macs, tenant, digest).some((form) => hashes.has(form))) return true;
      if (typeof o.source === 'string' && typeof o.externalId === 'string') {
        if (ids.has(eventIdOf(macs, tenant, idempotencyKeyOf(o.source, o.externalId, digest)))) return true;
      }
    }
    return Object.values(o).some(visit);
  };
  return visit(body);
}

/** A stage as stored: its body sealed under a data key of the stage's own (a body written before sealing is kept). */
interface StoredStage extends Omit<StagedWrite<unknown>, 'body'> {
  body: unknown;
}

const keyIdOf = (stageId: string) => `stage:${stageId}`;

/**
 * Staged writes in MongoDB. A body is sealed under the stage's own data key, destroyed when the stage is discarded
 * or erased: the copies of a staged batch in the database's log die with it.
 */
export function createMongoStagingStore(db: Db, macs: TenantMacs, cipher: ContentCipher): StagingStore {
  const staging = db.collection<StoredStage>(Collections.staging);
  /** The stage with its body opened; null when its key is gone (it was discarded or erased). */
  const opened = async (stage: StoredStage): Promise<StagedWrite<unknown> | null> => {
    // A body is stored as JSON text, sealed unless the cipher leaves content as it is; one written before sealing
    // was enabled is the object itself.
    if (typeof stage.body !== 'string') return stage as StagedWrite<unknown>;
    if (!isSealed(stage.body)) return { ...stage, body: JSON.parse(stage.body) as unknown };
    const body = await cipher.openOne({ _id: keyIdOf(stage._id), tenant: stage.tenant, content: stage.body });
    return body ? { ...stage, body: JSON.parse(body.content) as unknown } : null;
  };
  const remove = async (tenant: string, id: string) => {
    await cipher.shred(tenant, [keyIdOf(id)]);
    return staging.deleteOne(ownRow(tenant, id));
  };
  return {
    async ensureIndexes() {
      await staging.createIndex({ tenant: 1 });
    },
    async put(write) {
      const [sealed] = await cipher.sealAll([
        { _id: keyIdOf(write._id), tenant: write.tenant, content: JSON.stringify(write.body) },
      ]);
      const { _id, ...rest } = write;
      await replaceOwn(staging, _id, { ...rest, body: sealed!.content });
    },
    async get<T>(tenant: string, id: string) {
      const write = await findOwn(staging, tenant, id);
      return write ? ((await opened(write)) as StagedWrite<T> | null) : null;
    },
    async discard(tenant, id) {
      await remove(tenant, id);
    },
    async eraseMentioning(tenant, mentions) {
      if (mentions.subjects.length + mentions.ids.length + mentions.contentHashes.length === 0) return 0;
      // A tenant has few stages at a time (each lives for one ingestion), so one scan filtered here is cheap,
      // and it finds mentions nested in a body, which the local server would not filter on.
      const matching: string[] = [];
      for await (const stored of staging.find({ tenant }, { batchSize: 1000 })) {
        const write = await opened(stored);
        if (write && stageMentions(macs, tenant, write.body, mentions)) matching.push(write._id);
      }
      const removed = await mapBounded(matching, 16, (id) => remove(tenant, id));
      return removed.reduce((n, r) => n + r.deletedCount, 0);
    },
  };
}
