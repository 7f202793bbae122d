/**
 * Names, settings and mapping of the per-tenant memory index. Pure code: the adapter and tests share it.
 */
import type { estypes } from '@elastic/elasticsearch';
import { validationError } from '../../shared/errors.js';
import type { MemoryRecord } from '../model/records.js';

/** Tenant ids become part of index names, so they are restricted to what an index name allows. */
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

/** Bumped when the mapping changes incompatibly; a migration reindexes into the next version behind the alias. */
export const INDEX_VERSION = 1;

/** The alias every read and write goes through, and the concrete index it points to at creation. */
export interface TenantIndexNames {
  alias: string;
  index: string;
  /**
   * While the tenant is re-embedded: the alias of the index being filled with the new model's vectors. Erasure
   * reaches it too (deletes, status moves, probes, expunge), so a copy never outlives a purge. The dot cannot
   * occur in a tenant id, so no other tenant's names can collide with it.
   */
  next: string;
}

/** The concrete index a re-embedding fills, named by its generation (letters and digits). */
export function reembedIndexName(alias: string, generation: string): string {
  if (!/^[a-z0-9]{1,32}$/.test(generation))
    throw validationError('generation', 'must be 1–32 lower-case letters or digits');
  return `${alias}.e${generation}`;
}

/**
 * Whether a concrete index is one of the tenant's (its first index, a later version, or a re-embedding's): the
 * exact forms only, since a tenant id may extend another's (`t-v2` begins like `t`'s `t-v1`).
 */
export function isTenantIndexName(alias: string, index: string): boolean {
  if (!index.startsWith(alias)) return false;
  return /^(?:-v\d+|\.e[a-z0-9]{1,32})$/.test(index.slice(alias.length));
}

export function assertTenant(tenant: string): void {
  if (!TENANT_PATTERN.test(tenant)) throw validationError('tenant', 'must match ' + String(TENANT_PATTERN));
}

export function tenantIndexNames(prefix: string, tenant: string): TenantIndexNames {
  assertTenant(tenant);
  const alias = `${prefix}-mem-${tenant}`;
  return { alias, index: `${alias}-v${INDEX_VERSION}`, next: `${alias}.next` };
}

/** Base settings; callers' extra settings (e.g. the test-only lease sync interval) are merged over them. */
export function memoryIndexSettings(extra: Record<string, unknown> = {}): estypes.IndicesIndexSettings {
  return {
    // One shard: per-tenant indices are small, and BM25 statistics stay exact across the tenant.
    'index.number_of_shards': 1,
    // 0 replicas on a single node (green), 1 as soon as a second node exists.
    'index.auto_expand_replicas': '0-1',
    // Any segment holding a deleted document is rewritten by an expunge: erasure must leave none.
    'index.merge.policy.expunge_deletes_allowed': 0,
    ...extra,
  };
}

/** Strict mapping: a document with a field not listed here is refused, so nothing unplanned gets indexed. */
/** What indices created before the index recorded its embedder were embedded with. */
export const LEGACY_EMBEDDER = 'lethe-hashing-v1';

/** The embedder an index's vectors came from, as its mapping records it. */
export function indexEmbedderOf(mapping: estypes.MappingTypeMapping | undefined): string {
  const recorded = mapping?._meta?.embedder;
  return typeof recorded === 'string' ? recorded : LEGACY_EMBEDDER;
}

export function memoryIndexMapping(dims: number, embedder: string = LEGACY_EMBEDDER): estypes.MappingTypeMapping {
  const keyword = { type: 'keyword' } as const;
  const date = { type: 'date' } as const;
  return {
    dynamic: 'strict',
    // Vectors of two models are not comparable: a process embedding with another model must not write or probe here.
    _meta: { embedder, dims },
    properties: {
      memoryId: keyword,
      tenant: keyword,
      namespace: keyword,
      subjects: keyword,
      // The content's keyed hash: an erasure's verification finds a copy of erased content under another id.
      contentHash: keyword,
      // The key it was made under (absent: the plain digest of a document indexed before keying).
      hashKeyId: keyword,
      kind: keyword,
      status: keyword,
      principal: keyword,
      scope: keyword,
      purpose: keyword,
      sensitivity: keyword,
      jurisdiction: keyword,
      retentionClass: keyword,
      validFrom: date,
      validTo: date,
      recordedAt: date,
      trustTier: { type: 'integer' },
      confidence: { type: 'float' },
      content: { type: 'text', analyzer: 'standard' },
      embedding: {
        type: 'dense_vector',
        dims,
        index: true,
        similarity: 'cosine',
        // Float HNSW rather than the int8 default: vector probes compare exact similarities to a threshold.
        index_options: { type: 'hnsw', m: 16, ef_construction: 100 },
      },
    },
  };
}

/** The indexed form of a memory: its governance fields, its content and (when it has one) its embedding. */
export interface MemoryIndexDocument {
  memoryId: string;
  tenant: string;
  namespace: string;
  subjects: string[];
  contentHash: string;
  hashKeyId?: string;
  kind: string;
  status: string;
  principal: string;
  scope?: string;
  purpose: string;
  sensitivity: string;
  jurisdiction: string;
  retentionClass: string;
  validFrom: string;
  validTo?: string;
  recordedAt: string;
  trustTier: number;
  confidence: number;
  content: string;
  embedding?: number[];
}

/** Maps a record to its document; `validTo` and `embedding` are left out rather than null when absent. */
export function toIndexDocument(record: MemoryRecord, embedding: number[] | null): MemoryIndexDocument {
  const doc: MemoryIndexDocument = {
    memoryId: record._id,
    tenant: record.tenant,
    namespace: record.namespace,
    subjects: record.subjects,
    contentHash: record.contentHash,
    kind: record.kind,
    status: record.status,
    principal: record.writtenBy,
    purpose: record.policy.purpose,
    sensitivity: record.policy.sensitivity,
    jurisdiction: record.policy.jurisdiction,
    retentionClass: record.policy.retentionClass,
    validFrom: record.validFrom.toISOString(),
    recordedAt: record.recordedAt.toISOString(),
    trustTier: record.trustTier,
    confidence: record.confidence,
    content: record.content,
  };
  if (record.hashKeyId !== undefined) doc.hashKeyId = record.hashKeyId;
  if (record.scope !== undefined) doc.scope = record.scope;
  if (record.validTo !== null) doc.validTo = record.validTo.toISOString();
  if (embedding !== null) doc.embedding = embedding;
  return doc;
}
