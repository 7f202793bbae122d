import type { Db } from 'mongodb';
import type { Fingerprinter } from '../fingerprint.js';
import { Collections, duplicateKeysOnly } from '../mongo/collections.js';
import { findByIds } from '../mongo/bounded-scan.js';

/** What a tombstone forbids: an idempotency key, a content fingerprint for a subject, or a record id as a parent. */
export type TombstoneKind = 'idempotency-key' | 'subject-content' | 'record';

export interface TombstoneSpec {
  kind: TombstoneKind;
  /** The clear value is fingerprinted before it is stored; it never reaches the database. */
  parts: string[];
}

interface TombstoneDoc {
  _id: string;
  tenant: string;
  kind: TombstoneKind;
  requestId: string;
  createdAt: Date;
  /** The fingerprint key `_id` was made under (absent: `k0`, before keys had ids). */
  keyId?: string;
}

/** Keyed fingerprints of erased data; ingestion and derivation check them before writing. */
export interface TombstoneStore {
  ensureIndexes(): Promise<void>;
  /** Idempotent: writing the same tombstone twice keeps the first. */
  write(tenant: string, requestId: string, specs: readonly TombstoneSpec[]): Promise<number>;
  /** The specs that are tombstoned, in input order (`_id` lookups in parallel, or a bounded pass when many). */
  findTombstoned(tenant: string, specs: readonly TombstoneSpec[]): Promise<TombstoneSpec[]>;
}

export function createMongoTombstoneStore(db: Db, fingerprints: Fingerprinter): TombstoneStore {
  const collection = db.collection<TombstoneDoc>(Collections.tombstones);
  const id = (tenant: string, spec: TombstoneSpec) => fingerprints.of('tombstone', tenant, spec.kind, ...spec.parts);
  // Checked under every configured key: a tombstone written before a rotation still refuses what it erased.
  const ids = (tenant: string, spec: TombstoneSpec) => fingerprints.all('tombstone', tenant, spec.kind, ...spec.parts);
  return {
    async ensureIndexes() {
      await collection.createIndex({ tenant: 1, requestId: 1 });
    },
    async write(tenant, requestId, specs) {
      let written = 0;
      for (let i = 0; i < specs.length; i += 1000) {
        const docs = specs.slice(i, i + 1000).map((spec) => ({
          _id: id(tenant, spec),
          tenant,
          kind: spec.kind,
          requestId,
          createdAt: new Date(),
          keyId: fingerprints.keyId,
        }));
        try {
          const result = await collection.insertMany(docs, { ordered: false });
          written += result.insertedCount;
        } catch (error) {
          if (!duplicateKeysOnly(error)) throw error;
          written += (error as { result?: { insertedCount?: number } }).result?.insertedCount ?? 0;
        }
      }
      return written;
    },
    async findTombstoned(tenant, specs) {
      const variants = specs.map((spec) => ids(tenant, spec));
      const found = new Set((await findByIds(collection, tenant, variants.flat())).map((d) => d._id));
      return specs.filter((_, i) => variants[i]!.some((v) => found.has(v)));
    },
  };
}
