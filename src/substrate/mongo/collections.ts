import type { Collection, Db, Document, Filter, OptionalUnlessRequiredId, WithId, WithoutId } from 'mongodb';

/** Collection names in one place, so that erasure, compaction and tests agree on them. */
export const Collections = {
  events: 'events',
  memories: 'memories',
  lineage: 'lineage',
  tombstones: 'tombstones',
  staging: 'staged_writes',
  audit: 'audit',
  /** Each tenant's audit log as a Merkle tree: one document per leaf with the subtree hashes it completes. */
  auditTree: 'audit_tree',
  /** Signed checkpoints of each tenant's audit tree (C2SP tlog-checkpoint notes), one per published size. */
  auditCheckpoints: 'audit_checkpoints',
  /** Tenants with an audit log: what the checkpoint publisher visits. */
  auditTenants: 'audit_tenants',
  certificates: 'certificates',
  holds: 'legal_holds',
  holdReleases: 'legal_hold_releases',
  /** Restrictions of processing (Art. 18) and objections (Art. 21): the subject as a keyed hash only. */
  restrictions: 'subject_restrictions',
  /** Access and portability requests (Art. 15, 20): ids, keyed hashes, counts and dates. */
  accessRequests: 'access_requests',
  /** Their packages' heads (part count, the ids of the records held) and their parts, each sealed under its own key. */
  accessPackages: 'access_packages',
  accessPackageParts: 'access_package_parts',
  /** Ids an erasure purged, kept a day: a package being built checks them instead of reading its records again. */
  accessPurgeNotes: 'access_purge_notes',
  /** Rectification requests (Art. 16): ids, hashes and dates, the corrected content sealed until it is applied. */
  rectifications: 'rectification_requests',
  /** Signed receipts of closed subject-rights requests (ids, states, dates, counts), anchored in the audit chain. */
  rightsReceipts: 'rights_receipts',
  /** The claim of each lift (a unique insert: the local server's conditional update is not atomic). */
  restrictionLifts: 'subject_restriction_lifts',
  /** Per tenant, a value every filing and lift changes: readers reload the active set only when it has changed. */
  restrictionGenerations: 'subject_restriction_generations',
  erasures: 'erasure_requests',
  /** The clear selector of an open erasure request, apart from the request (deleted and compacted when it finishes). */
  erasureSelectors: 'erasure_selectors',
  retrievals: 'retrievals',
  exposures: 'exposures',
  erasureSets: 'erasure_sets',
  transitions: 'memory_transitions',
  erasureProbes: 'erasure_probes',
  disputes: 'disputes',
  disputeReasons: 'dispute_reasons',
  reviews: 'review_decisions',
  erasureFences: 'erasure_fences',
  admissionLeases: 'admission_leases',
  deletionMarks: 'memory_deletion_marks',
  /** Holds, contests, stale flags and correction marks of memories and events, one document each (ids only). */
  recordMarks: 'record_marks',
  erasureFacts: 'erasure_facts',
  /** Per-tenant quota counters (writes of a day, bytes stored): counts only. */
  tenantUsage: 'tenant_usage',
  /** The bytes each record written through the API holds, given back to the quota when it is erased. */
  storedRecords: 'stored_record_bytes',
  /** Revoked bearer tokens: their `jti` and when they would have expired, nothing else. */
  revokedTokens: 'revoked_tokens',
  /** One data key per content-bearing record, wrapped under a key-encryption key epoch (see substrate/crypto). */
  dataKeys: 'data_keys',
  /** Which data keys were destroyed and when: the feed every process reads to forget the keys it holds. */
  dataKeyDestructions: 'data_key_destructions',
} as const;

export function isDuplicateKey(error: unknown): boolean {
  return (error as { code?: number }).code === 11000;
}

/**
 * A tenant's document by id, or null: never another tenant's, whatever id the caller names. Ids are not secrets (a
 * request id, a memory id): confinement is in the query itself, not left to each caller's check afterwards. Two
 * equalities, one of them on `_id`: the local server answers them from the `_id` lookup. A `projection` narrows
 * what comes back (the fields the caller reads), never which document.
 */
/**
 * The filter of one row by its id, refused unless it is the tenant's. `_id` is unique in a collection, so the tenant
 * never chooses among rows, it only refuses the one the id names: it is given as `$in` of one value, which the local
 * server (FerretDB 1.24) checks on the row it found by `_id` instead of sending it to PostgreSQL, where the tenant's
 * index would be read whole beside the id's for every lookup (a `BitmapAnd` over all of the tenant's rows: a delete
 * by id took twice as long at 12 000 rows, and more as the tenant grows). MongoDB reads both forms alike.
 */
export function ownRow<T extends { _id: string; tenant: string }>(tenant: string, id: string): Filter<T> {
  return { _id: id, tenant: { $in: [tenant] } } as Filter<T>;
}

export async function findOwn<T extends { _id: string; tenant: string }>(
  collection: Collection<T>,
  tenant: string,
  id: string,
  options: { projection?: Document } = {},
): Promise<WithId<T> | null> {
  // No stored document holds a NUL (PostgreSQL text under FerretDB cannot), and FerretDB fails such a query rather
  // than finding nothing: the answer is known without asking.
  if (id.includes('\u0000') || tenant.includes('\u0000')) return null;
  const filter = ownRow<T>(tenant, id);
  return options.projection
    ? collection.findOne(filter, { projection: options.projection })
    : collection.findOne(filter);
}

/**
 * The one reading of a write's error for duplicate keys: the batch positions of its failures when every one of them
 * was a duplicate key (the documents were there already), or null when any failure was something else, which the
 * caller rethrows. A single-document write refused as a duplicate answers `[0]`. An error that says 11000 at its top
 * while one of its items failed otherwise is null: a duplicate never hides another failure.
 */
export function duplicateKeysOnly(error: unknown): number[] | null {
  const raw = (error as { writeErrors?: WriteFailure[] | WriteFailure }).writeErrors;
  const list = Array.isArray(raw) ? raw : raw ? [raw] : [];
  if (list.length === 0) return isDuplicateKey(error) ? [0] : null;
  return list.every((e) => e.code === 11000) ? list.map((e) => e.index ?? 0) : null;
}

interface WriteFailure {
  code?: number;
  index?: number;
}

/**
 * Inserts a tenant's document unless one with its id is there: then the stored one comes back, `created: false` (a
 * filing retried under the same key). An id held by another tenant is the insert's own error, never that document.
 */
export async function insertOnce<T extends { _id: string; tenant: string }>(
  collection: Collection<T>,
  doc: T,
): Promise<{ doc: T; created: boolean }> {
  try {
    await collection.insertOne(doc as OptionalUnlessRequiredId<T>);
    return { doc, created: true };
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    const existing = (await findOwn(collection, doc.tenant, doc._id)) as T | null;
    if (!existing) throw error;
    return { doc: existing, created: false };
  }
}

/**
 * Writes a tenant's document under an id, replacing the tenant's own earlier one. The tenant is in the filter: an id
 * another tenant holds matches nothing, so the upsert's insert fails on the primary key (a duplicate-key error)
 * rather than overwriting that tenant's document.
 */
export async function replaceOwn<T extends { _id: string; tenant: string }>(
  collection: Collection<T>,
  id: string,
  doc: WithoutId<T>,
): Promise<void> {
  await collection.replaceOne({ _id: id, tenant: doc.tenant } as Filter<T>, doc, { upsert: true });
}

/** Runs `fn` over items with at most `limit` in flight — the fast path on FerretDB, which scans for `$in`. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  // Once one call has failed the whole map has failed: no further item is started (calls under way finish).
  let failed = false;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const index = next++;
      if (failed || index >= items.length) return;
      try {
        results[index] = await fn(items[index]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  await Promise.all(workers);
  return results;
}

export type { Db };
