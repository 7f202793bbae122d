import type { Db } from 'mongodb';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { Collections, duplicateKeysOnly, mapBounded } from '../../substrate/mongo/collections.js';
import { SCAN_DOCS_PER_LOOKUP, scanWithin } from '../../substrate/mongo/bounded-scan.js';
import { createMongoAdmissionLeaseStore, type AdmissionLeaseStore } from './admission-lease-store.js';

/**
 * What a running erasure fences off: writes about its data subject, writes of its content, and derivations
 * citing a record of its closure (located, derived or held). Keys are keyed hashes, never clear values.
 */
export type FenceKind = 'subject' | 'content' | 'record';

export interface FenceKey {
  kind: FenceKind;
  value: string;
}

interface FenceDoc {
  /** Keyed hash of (tenant, key, request): raising the same fence twice is a duplicate, not a second fence. */
  _id: string;
  tenant: string;
  /** Keyed hash of (tenant, key): what admission looks up. */
  key: string;
  requestId: string;
  raisedAt: Date;
  /** The fingerprint key `key` was made under (absent: `k0`, before keys had ids). */
  keyId?: string;
}

/** A write refused by a fence: which of the checked keys hit, and the request that holds it. */
export interface FenceHit {
  index: number;
  requestId: string;
}

/**
 * Fences of running erasure requests. Raised before the records they protect are located (the subject) or
 * walked (the closure), lowered when the request completes; a write checks them before it writes anything and
 * again after. Admissions hold a lease over both checks, and a fence comes down only after the admissions in
 * flight have finished or lost their lease: so every write either lands before a fence (and the erasure locates
 * it) or sees one on a check (and takes itself back).
 */
export interface ErasureFenceStore {
  ensureIndexes(): Promise<void>;
  /** Idempotent. Returns how many keys are fenced for the request after the call (new or already there). */
  raise(tenant: string, requestId: string, keys: readonly FenceKey[]): Promise<number>;
  /**
   * The first of `keys` (in order) under a fence, or null: a bounded pass over the tenant's fences for many keys, or
   * equality lookups by keyed hash in parallel.
   */
  firstFenced(tenant: string, keys: readonly FenceKey[]): Promise<FenceHit | null>;
  /**
   * Removes every fence of the request (it completed or was rejected), once the admissions in flight in the tenant
   * have finished or been revoked (`admissions.drain`).
   */
  lower(tenant: string, requestId: string): Promise<number>;
  /** Leases of the admissions in flight, which a lowering waits for. */
  admissions: AdmissionLeaseStore;
}

const CHUNK = 1000;
/** Keys from which a pass over the tenant's fences is tried before a lookup per key. */
const FENCE_SCAN_MIN = 8;

/** `admissions`: the leases a lowering waits for (by default, in the same database with the default timing). */
export function createMongoErasureFenceStore(
  db: Db,
  fingerprints: Fingerprinter,
  admissions: AdmissionLeaseStore = createMongoAdmissionLeaseStore(db, fingerprints),
): ErasureFenceStore {
  const fences = db.collection<FenceDoc>(Collections.erasureFences);
  const keyOf = (tenant: string, k: FenceKey) => fingerprints.of('fence', tenant, k.kind, k.value);
  // Checked under every configured key: a fence raised before a rotation still blocks.
  const keysOf = (tenant: string, k: FenceKey) => fingerprints.all('fence', tenant, k.kind, k.value);
  return {
    admissions,
    async ensureIndexes() {
      await fences.createIndex({ key: 1 });
      await fences.createIndex({ tenant: 1, requestId: 1 });
      await admissions.ensureIndexes();
    },
    async raise(tenant, requestId, keys) {
      const unique = [...new Map(keys.map((k) => [keyOf(tenant, k), k])).keys()];
      const raisedAt = new Date();
      for (let i = 0; i < unique.length; i += CHUNK) {
        const docs = unique.slice(i, i + CHUNK).map((key) => ({
          _id: fingerprints.of('fence-of', key, requestId),
          tenant,
          key,
          requestId,
          raisedAt,
          keyId: fingerprints.keyId,
        }));
        try {
          await fences.insertMany(docs, { ordered: false });
        } catch (error) {
          if (!duplicateKeysOnly(error)) throw error;
        }
      }
      return unique.length;
    },
    async firstFenced(tenant, keys) {
      const hashed = keys.map((k) => keysOf(tenant, k));
      if (hashed.length >= FENCE_SCAN_MIN) {
        // A tenant has fences only while its erasures run, so its fences are few: one bounded pass answers every key
        // of a batch, where a lookup per key would cost hundreds of round trips.
        const raised = new Map<string, string>();
        const complete = await scanWithin(
          fences,
          { tenant },
          hashed.length * SCAN_DOCS_PER_LOOKUP,
          (fence) => {
            if (!raised.has(fence.key)) raised.set(fence.key, fence.requestId);
          },
          { key: 1, requestId: 1 },
        );
        if (complete) {
          const index = hashed.findIndex((variants) => variants.some((key) => raised.has(key)));
          if (index < 0) return null;
          return { index, requestId: raised.get(hashed[index]!.find((key) => raised.has(key))!)! };
        }
      }
      // One equality lookup per key variant (a key under each listed fingerprint key): the local server pushes
      // equality down and scans the collection for `$in`, and this runs on every admission.
      const lookups = [...hashed.entries()].flatMap(([index, variants]) => variants.map((key) => ({ index, key })));
      const hits = await mapBounded(lookups, 16, async ({ index, key }) => {
        const found = await fences.findOne({ key }, { projection: { requestId: 1, tenant: 1 } });
        return found && found.tenant === tenant ? { index, requestId: found.requestId } : null;
      });
      return hits.find((h) => h !== null) ?? null;
    },
    async lower(tenant, requestId) {
      // An admission that checked before these fences went up may still write: it must meet them on its check
      // after writing, so they stay up until it is done (or revoked, and then it takes its writes back).
      await admissions.drain(tenant, requestId);
      const result = await fences.deleteMany({ tenant, requestId });
      return result.deletedCount;
    },
  };
}
