import type { Db } from 'mongodb';
import { sha256Hex, type TenantMacs } from '../fingerprint.js';
import { eventIdOf, idempotencyKeyOf } from '../events/event-store.js';
import { Collections, mapBounded } from '../mongo/collections.js';

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
  /** SHA-256 hex digests of content. */
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
      const hash = sha256Hex(o.content);
      if (hashes.has(hash)) return true;
      if (typeof o.source === 'string' && typeof o.externalId === 'string') {
        if (ids.has(eventIdOf(macs, tenant, idempotencyKeyOf(o.source, o.externalId, hash)))) return true;
      }
    }
    return Object.values(o).some(visit);
  };
  return visit(body);
}

export function createMongoStagingStore(db: Db, macs: TenantMacs): StagingStore {
  const staging = db.collection<StagedWrite<unknown>>(Collections.staging);
  return {
    async ensureIndexes() {
      await staging.createIndex({ tenant: 1 });
    },
    async put(write) {
      await staging.replaceOne({ _id: write._id }, write as StagedWrite<unknown>, { upsert: true });
    },
    async get<T>(tenant: string, id: string) {
      const write = await staging.findOne({ _id: id });
      return write && write.tenant === tenant ? (write as StagedWrite<T>) : null;
    },
    async discard(tenant, id) {
      await staging.deleteOne({ _id: id, tenant });
    },
    async eraseMentioning(tenant, mentions) {
      if (mentions.subjects.length + mentions.ids.length + mentions.contentHashes.length === 0) return 0;
      // A tenant has few stages at a time (each lives for one ingestion), so one scan filtered here is cheap,
      // and it finds mentions nested in a body, which the local server would not filter on.
      const matching: string[] = [];
      for await (const write of staging.find({ tenant }, { batchSize: 1000 })) {
        if (stageMentions(macs, tenant, write.body, mentions)) matching.push(write._id);
      }
      const removed = await mapBounded(matching, 16, (id) => staging.deleteOne({ _id: id, tenant }));
      return removed.reduce((n, r) => n + r.deletedCount, 0);
    },
  };
}
