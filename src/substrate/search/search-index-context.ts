/**
 * What every part of the Elasticsearch search index shares: the client, the embedder, the tenant's index names,
 * what this process remembers about each tenant's index, and the readers of `_bulk` and search answers.
 */
import type { Client, estypes } from '@elastic/elasticsearch';
import type { Embedder } from './embedder.port.js';
import type { TenantIndexNames } from './index-layout.js';
import { SearchIndexError, guarded } from './search-index-error.js';
import type { ItemFailure } from './search-index.port.js';

/** How long this process trusts what it learnt about a tenant's index (exists, holds its model). */
export const CACHE_MS = 60_000;

/** Keys remembered for a while only. */
export interface ExpiringSet {
  has(key: string): boolean;
  add(key: string): void;
  delete(key: string): void;
}

export function expiringSet(ttlMs: number): ExpiringSet {
  const until = new Map<string, number>();
  return {
    has: (key: string) => (until.get(key) ?? 0) > Date.now(),
    add: (key: string) => void until.set(key, Date.now() + ttlMs),
    delete: (key: string) => void until.delete(key),
  };
}

/** The client, the adapter's options and this process's memory of each tenant's index, passed to every part. */
export interface SearchIndexContext {
  readonly client: Client;
  readonly embedder: Embedder;
  /** Settings of the indices the adapter creates. */
  readonly indexSettings: Record<string, unknown> | undefined;
  /** Documents per `_bulk` request. */
  readonly chunkSize: number;
  readonly names: (tenant: string) => TenantIndexNames;
  /** Tenants whose index this process has seen to exist (with its model). */
  readonly ensured: ExpiringSet;
  /** Tenants whose index holds vectors of this process's embedder. */
  readonly sameModel: ExpiringSet;
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The single action of one `_bulk` response item. */
export function bulkItem(
  item: Partial<Record<estypes.BulkOperationType, estypes.BulkResponseItem>>,
): estypes.BulkResponseItem {
  const result = Object.values(item)[0];
  if (result === undefined) throw new SearchIndexError('bulk', null, 'empty_bulk_item', true);
  return result;
}

export function failureOf(item: estypes.BulkResponseItem, fallbackId: string): ItemFailure {
  return { id: item._id ?? fallbackId, status: item.status, type: item.error?.type ?? 'unknown' };
}

export function hitIds(hits: estypes.SearchHit<unknown>[]): string[] {
  return hits.map((h) => h._id).filter((id): id is string => typeof id === 'string');
}

export function aliasExists(ctx: SearchIndexContext, alias: string): Promise<boolean> {
  return guarded('exists-alias', () => ctx.client.indices.existsAlias({ name: alias }));
}

export async function refresh(ctx: SearchIndexContext, alias: string, operation: string): Promise<void> {
  await guarded(operation, () => ctx.client.indices.refresh({ index: alias }));
}
