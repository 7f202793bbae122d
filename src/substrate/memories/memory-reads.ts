/**
 * Reads of memory records: by id, by subject, status, content hash or time, and a tenant's pages. Records read with
 * their content come through `readable`, so each shows its claimed moves and marks and has its content opened.
 */
import type { Collection } from 'mongodb';
import type { MemoryStatus } from '../../shared/lifecycle.js';
import type { MemoryRecord } from '../model/records.js';
import { findByIds, findMatching, writtenBy } from '../mongo/bounded-scan.js';
import { findOwn } from '../mongo/collections.js';
import { keysetPage, type Page, type PageKey } from '../mongo/keyset-page.js';
import type { MemoryStoreContext } from './memory-store-context.js';
import type { MemoryFacts } from './memory-store.port.js';
import type { WrittenTogether } from '../model/written-together.js';

const FACT_FIELDS = {
  _id: 1,
  tenant: 1,
  version: 1,
  status: 1,
  statusReason: 1,
  subjects: 1,
  namespace: 1,
  contentHash: 1,
  hashKeyId: 1,
};

/** Records as every content read sees them: claimed moves applied, marks laid over, content opened. */
export async function readable(ctx: MemoryStoreContext, tenant: string, found: MemoryRecord[]) {
  return ctx.cipher.openAll(await ctx.recordMarks.overlay(tenant, await ctx.marks.standing(tenant, found)));
}

export async function get(ctx: MemoryStoreContext, tenant: string, id: string): Promise<MemoryRecord | null> {
  const record = await findOwn(ctx.memories, tenant, id);
  return record ? ((await readable(ctx, tenant, [record]))[0] ?? null) : null;
}

export async function getMany(
  ctx: MemoryStoreContext,
  tenant: string,
  ids: readonly string[],
  written?: WrittenTogether,
) {
  const found = await findByIds(ctx.memories, tenant, ids, writtenBy(written));
  return readable(ctx, tenant, found);
}

export async function factsOf(
  ctx: MemoryStoreContext,
  tenant: string,
  ids: readonly string[],
  written?: WrittenTogether,
) {
  const found = await findByIds(ctx.memories as unknown as Collection<MemoryFacts>, tenant, ids, {
    projection: FACT_FIELDS,
    ...writtenBy(written),
  });
  return ctx.marks.standing(tenant, found);
}

export async function idsBySubject(ctx: MemoryStoreContext, tenant: string, subject: string): Promise<string[]> {
  const docs = await ctx.memories.find({ tenant, subjects: subject }, { projection: { _id: 1 } }).toArray();
  return docs.map((d) => d._id);
}

export async function allBySubject(ctx: MemoryStoreContext, tenant: string, subject: string) {
  return readable(ctx, tenant, await ctx.memories.find({ tenant, subjects: subject }).toArray());
}

export async function listByStatus(ctx: MemoryStoreContext, tenant: string, status: MemoryStatus, limit: number) {
  const found = await ctx.memories.find({ tenant, status }).sort({ recordedAt: 1 }).limit(limit).toArray();
  // A record claimed by an erasure still says its old status in its row until the purge removes it.
  return (await readable(ctx, tenant, found)).filter((r) => r.status === status);
}

export async function pageByStatus(
  ctx: MemoryStoreContext,
  tenant: string,
  status: MemoryStatus,
  limit: number,
  after: PageKey | null,
): Promise<Page<MemoryRecord>> {
  const page = await keysetPage(ctx.memories, { tenant, status }, 'recordedAt', 1, limit, after);
  return { items: (await readable(ctx, tenant, page.items)).filter((r) => r.status === status), next: page.next };
}

export async function pageOfTenant(ctx: MemoryStoreContext, tenant: string, afterId: string | null, limit: number) {
  const filter = afterId === null ? { tenant } : { tenant, _id: { $gt: afterId } };
  return readable(ctx, tenant, await ctx.memories.find(filter).sort({ _id: 1 }).limit(limit).toArray());
}

export async function idsByContentHashes(
  ctx: MemoryStoreContext,
  tenant: string,
  contentHashes: readonly string[],
): Promise<string[]> {
  const docs = await findMatching(ctx.memories, tenant, 'contentHash', contentHashes, {
    projection: { _id: 1, contentHash: 1 },
  });
  return docs.map((d) => d._id);
}

export async function idsByTime(
  ctx: MemoryStoreContext,
  tenant: string,
  field: 'validFrom' | 'recordedAt',
  from: Date,
  to: Date,
): Promise<string[]> {
  // A range is not pushed down on the local server (a scan per tenant); selectors by time are rare.
  const docs = await ctx.memories
    .find({ tenant, [field]: { $gte: from, $lt: to } }, { projection: { _id: 1 } })
    .toArray();
  return docs.map((d) => d._id);
}
