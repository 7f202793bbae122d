import type { Db } from 'mongodb';
import type { Fingerprinter } from '../fingerprint.js';
import { Collections, isDuplicateKey, mapBounded } from '../mongo/collections.js';

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
}

/** Keyed fingerprints of erased data; ingestion and derivation check them before writing. */
export interface TombstoneStore {
  ensureIndexes(): Promise<void>;
  /** Idempotent: writing the same tombstone twice keeps the first. */
  write(tenant: string, requestId: string, specs: readonly TombstoneSpec[]): Promise<number>;
  /** The specs that are tombstoned, in input order (equality lookups by `_id`, in parallel). */
  findTombstoned(tenant: string, specs: readonly TombstoneSpec[]): Promise<TombstoneSpec[]>;
}

export function createMongoTombstoneStore(db: Db, fingerprints: Fingerprinter): TombstoneStore {
  const collection = db.collection<TombstoneDoc>(Collections.tombstones);
  const id = (tenant: string, spec: TombstoneSpec) => fingerprints.of('tombstone', tenant, spec.kind, ...spec.parts);
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
        }));
        try {
          const result = await collection.insertMany(docs, { ordered: false });
          written += result.insertedCount;
        } catch (error) {
          if (!isDuplicateKey(error) && !hasOnlyDuplicateErrors(error)) throw error;
          written += (error as { result?: { insertedCount?: number } }).result?.insertedCount ?? 0;
        }
      }
      return written;
    },
    async findTombstoned(tenant, specs) {
      const hits = await mapBounded(specs, 32, async (spec) =>
        (await collection.findOne({ _id: id(tenant, spec) }, { projection: { _id: 1 } })) ? spec : null,
      );
      return hits.filter((s): s is TombstoneSpec => s !== null);
    },
  };
}

function hasOnlyDuplicateErrors(error: unknown): boolean {
  const writeErrors = (error as { writeErrors?: { code: number }[] | { code: number } }).writeErrors;
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
  return list.length > 0 && list.every((e) => e.code === 11000);
}
