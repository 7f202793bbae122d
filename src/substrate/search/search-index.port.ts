import type { MemoryStatus } from '../../shared/lifecycle.js';
import type { MemoryRecord } from '../model/records.js';

/**
 * Scope, policy and lifecycle constraints pushed down into both halves of a hybrid query (never applied
 * after the top-k). An omitted field does not constrain; an empty list admits nothing (default deny).
 */
export interface SearchFilters {
  namespaces?: string[];
  /** Owner scopes (`principal:<id>`, `tenant`); a document without a scope matches none. */
  scopes?: string[];
  subjects?: string[];
  kinds?: string[];
  statuses?: string[];
  purposes?: string[];
  sensitivities?: string[];
  /** Valid time contains this instant: validFrom <= t and (no validTo or validTo > t). */
  validAt?: Date;
  /** Valid time has not ended at this instant: no validTo, or validTo > t (a `current` question). */
  currentAt?: Date;
  /**
   * A reader's grants, ORed: a document matches when, for one grant, its sensitivity is one the grant reads and
   * (unless the grant is tenant-wide, `scopes` absent) its scope is one of the grant's. An empty list matches none.
   */
  grants?: { scopes?: string[]; sensitivities: string[] }[];
}

/** A hybrid (BM25 + kNN) query within one tenant. */
export interface HybridQuery {
  text: string;
  /** How many fused results to return. */
  k: number;
  filters: SearchFilters;
}

/** One fused hit: ids, ranks and scores only, never content. Ranks are 1-based. */
export interface SearchHit {
  id: string;
  score: number;
  bm25Rank?: number;
  knnRank?: number;
}

/** How a write request asks for visibility: `wait_for` blocks until the next refresh makes it searchable. */
export type RefreshMode = boolean | 'wait_for';

/** A per-document failure: the id, the HTTP status and Elasticsearch's error type — never its reason text. */
export interface ItemFailure {
  id: string;
  status: number;
  type: string;
}

export interface UpsertResult {
  indexed: number;
  failed: ItemFailure[];
}

export interface UpdateStatusResult {
  updated: number;
  notFound: number;
  failed: ItemFailure[];
}

/**
 * Why a concrete index holds the tenant's documents: behind the live alias, the copy a re-embedding fills, or an
 * orphan behind neither (a re-embedding whose old index could not be deleted): erasure reaches all three.
 */
export type IndexRole = 'live' | 'reembedding' | 'orphan';

/** A concrete index an erasure step reached, with what it found there. */
export interface ReachedIndex {
  index: string;
  role: IndexRole;
  deleted: number;
}

export interface PurgeResult {
  /** The live index's counts (the copies elsewhere are the same records). */
  deleted: number;
  notFound: number;
  /** Every concrete index the purge went to. */
  indices: ReachedIndex[];
}

/** Segment statistics after an expunge; `deletedDocs > 0` means deleted bytes may still be on disk. */
export interface SegmentStats {
  deletedDocs: number;
  segments: number;
  /** Per concrete index reached. */
  indices: { index: string; role: IndexRole; deletedDocs: number }[];
}

/** What an erasure verification looks for; each probe is optional. */
export interface ProbeRequest {
  ids?: string[];
  /** Matched as a phrase against the content. */
  text?: string;
  /** Each matched as a phrase against the content, in one query: `byText` holds documents matching any of them. */
  texts?: string[];
  vector?: number[];
  /** Minimum cosine similarity for a vector hit; defaults to `DEFAULT_PROBE_SIMILARITY`. */
  similarity?: number;
  /** Documents about any of these subjects (exact term). */
  subjects?: string[];
  /** Documents whose content has any of these keyed hashes, whatever their id. */
  contentHashes?: string[];
}

/** Which documents each probe still reaches; `found` is their union. Ids only. */
export interface ProbeResult {
  found: string[];
  byId: string[];
  byText: string[];
  byVector: string[];
  bySubject: string[];
  byContentHash: string[];
  /** The concrete indices each kind of probe ran on (a vector probe only where the vectors are this model's). */
  ranOn: { id: string[]; text: string[]; vector: string[]; subject: string[] };
}

/** Near-duplicate threshold for vector probes: close enough to be the same text re-embedded. */
export const DEFAULT_PROBE_SIMILARITY = 0.95;

/** The hybrid search index of memories, one index per tenant. */
export interface SearchIndex {
  /** Creates the tenant's index and alias if missing; safe under concurrent callers. */
  ensureTenantIndex(tenant: string): Promise<void>;
  /** Indexes (or replaces) records by memory id, embedding their content. Creates the tenant index if needed. */
  upsert(tenant: string, records: readonly MemoryRecord[], options?: { refresh?: RefreshMode }): Promise<UpsertResult>;
  /** Sets the status of the given documents (a partial update, no scripts). */
  updateStatus(
    tenant: string,
    ids: readonly string[],
    status: MemoryStatus,
    options?: { refresh?: RefreshMode },
  ): Promise<UpdateStatusResult>;
  /**
   * BM25 and kNN under the same filters in one round trip, fused with reciprocal rank fusion (k = 60), best
   * first. Blank text, a filter that admits nothing, or a tenant without an index give no hits.
   */
  search(tenant: string, query: HybridQuery): Promise<SearchHit[]>;
  /** `search` for many queries of one tenant at once (one embedding call, few round trips), answers in order. */
  searchMany(tenant: string, queries: readonly HybridQuery[]): Promise<SearchHit[][]>;
  /**
   * Every document id the live alias holds under these filters, a page at a time in id order: all that any
   * `search` under the same filters could return, whatever its text or rank. No index, or filters that admit
   * nothing, give no page.
   */
  idsUnder(tenant: string, filters: SearchFilters, options?: { pageSize?: number }): AsyncIterable<string[]>;
  /** Deletes documents by id and refreshes, so they stop being searchable at once. Idempotent. */
  purge(tenant: string, ids: readonly string[]): Promise<PurgeResult>;
  /**
   * Makes deletions physical: force merge with expunge and flush, then reports segment statistics. Deleted
   * docs can remain until the soft-delete retention lease advances (30 s by default): callers wait and retry.
   */
  expungeDeleted(tenant: string): Promise<SegmentStats>;
  /** Reads `_segments` as it is (no refresh, no merge): what a verification may rely on. */
  segmentStats(tenant: string): Promise<SegmentStats>;
  /** The concrete index behind the tenant's alias, or null when the tenant has none. */
  indexOf(tenant: string): Promise<string | null>;
  /** Concrete indices of the tenant behind neither its live nor its re-embedding alias. */
  orphans(tenant: string): Promise<string[]>;
  /** Deletes the orphans (see `orphans`); returns the names deleted. */
  dropOrphans(tenant: string): Promise<string[]>;
  /** Which of the probed ids, phrase or vector still reach a document of the tenant. */
  probe(tenant: string, request: ProbeRequest): Promise<ProbeResult>;
  /** Deletes the tenant's index and alias (tests and tenant offboarding). */
  dropTenant(tenant: string): Promise<void>;
}
