/**
 * The search index against the real local Elasticsearch node: tenant isolation, filters pushed into both
 * halves of the hybrid query, fusion, status updates, and erasure down to the Lucene segments.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import type { SearchIndex } from '../../../src/substrate/search/search-index.port.js';
import { createEmbedder } from '../../../src/substrate/search/embedder-factory.js';
import type { Embedder } from '../../../src/substrate/search/embedder.port.js';
import { createElasticsearchSearchIndex } from '../../../src/substrate/search/elasticsearch-search-index.js';
import { tenantIndexNames } from '../../../src/substrate/search/index-layout.js';
import { RRF_K } from '../../../src/substrate/search/rrf.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { memoryRecord as memory } from '../../support/samples.js';

let runtime: Runtime;
let index: SearchIndex;
let embed: (text: string) => Promise<number[]>;
let embedder: Embedder;

beforeAll(() => {
  runtime = testRuntime();
  embedder = createEmbedder(runtime.config.embedder);
  embed = async (text) => (await embedder.embed([text]))[0]!;
  index = createElasticsearchSearchIndex(runtime.es, {
    prefix: runtime.config.elasticsearch.indexPrefix,
    embedder,
    // Test-only: the retention lease syncs every second, so expunged deletes leave the segments quickly.
    indexSettings: { 'index.soft_deletes.retention_lease.sync_interval': '1s' },
  });
});

afterAll(async () => {
  await runtime?.close();
});

/** A tenant of the test's own, whose index is dropped when the test ends. */
function tenantForTest(): string {
  const tenant = uniqueId('t');
  onTestFinished(() => index.dropTenant(tenant));
  return tenant;
}

const QUERY = 'customer prefers email contact on weekday mornings';

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

describe('Elasticsearch search index', () => {
  it('creates one index per tenant behind its alias, idempotently, even with concurrent creators', async () => {
    const tenant = tenantForTest();
    await Promise.all(Array.from({ length: 5 }, () => index.ensureTenantIndex(tenant)));
    await index.ensureTenantIndex(tenant);
    const { alias, index: concrete } = tenantIndexNames(runtime.config.elasticsearch.indexPrefix, tenant);
    const aliases = await runtime.es.indices.getAlias({ name: alias });
    expect(Object.keys(aliases)).toEqual([concrete]);
    const mapping = await runtime.es.indices.getMapping({ index: concrete });
    expect(mapping[concrete]?.mappings.dynamic).toBe('strict');
    expect(mapping[concrete]?.mappings.properties?.embedding).toMatchObject({
      type: 'dense_vector',
      dims: embedder.dims,
      similarity: 'cosine',
    });
  });

  it("returns only the asking tenant's documents, even when another tenant holds the same texts", async () => {
    const a = tenantForTest();
    const b = tenantForTest();
    const texts = [QUERY, 'the customer likes email in the morning', 'invoice sent to the customer by email'];
    await index.upsert(
      a,
      texts.map((t, i) => memory(a, `a-${i}`, t)),
      { refresh: 'wait_for' },
    );
    await index.upsert(
      b,
      texts.map((t, i) => memory(b, `b-${i}`, t)),
      { refresh: 'wait_for' },
    );

    const hitsA = await index.search(a, { text: QUERY, k: 10, filters: {} });
    const hitsB = await index.search(b, { text: QUERY, k: 10, filters: {} });
    expect(hitsA.map((h) => h.id).sort()).toEqual(['a-0', 'a-1', 'a-2']);
    expect(hitsB.map((h) => h.id).sort()).toEqual(['b-0', 'b-1', 'b-2']);
    expect(await index.search(uniqueId('t'), { text: QUERY, k: 10, filters: {} })).toEqual([]);
  });

  it('refuses to index a record of another tenant into this one', async () => {
    const a = tenantForTest();
    await expect(index.upsert(a, [memory('other-tenant', 'x-1', QUERY)])).rejects.toMatchObject({
      name: 'ValidationError',
    });
  });

  it('applies namespace filters inside BM25 and kNN: 30 better matches out of scope do not crowd out the one in scope', async () => {
    const tenant = tenantForTest();
    // More out-of-scope exact matches than the rank window: a filter applied after top-k would return nothing.
    const outOfScope = Array.from({ length: 30 }, (_, i) => memory(tenant, `hr-${i}`, QUERY, { namespace: 'hr' }));
    const inScope = memory(tenant, 'crm-1', 'the customer wants email contact', { namespace: 'crm' });
    await index.upsert(tenant, [...outOfScope, inScope], { refresh: 'wait_for' });

    const unfiltered = await index.search(tenant, { text: QUERY, k: 1, filters: {} });
    expect(unfiltered[0]?.id).toMatch(/^hr-/);

    const hits = await index.search(tenant, { text: QUERY, k: 1, filters: { namespaces: ['crm'] } });
    expect(hits).toEqual([{ id: 'crm-1', score: 2 / (RRF_K + 1), bm25Rank: 1, knnRank: 1 }]);
    expect(await index.search(tenant, { text: QUERY, k: 5, filters: { namespaces: [] } })).toEqual([]);
  });

  it('answers many queries at once exactly as it answers each alone, across more than one round trip', async () => {
    const tenant = tenantForTest();
    const words = ['email', 'phone', 'letter', 'visit', 'fax', 'chat'];
    await index.upsert(
      tenant,
      words.flatMap((w, i) => [
        memory(tenant, `${w}-crm`, `the customer prefers ${w} contact`, { namespace: 'crm' }),
        memory(tenant, `${w}-hr`, `staff ${w} rota number ${i}`, { namespace: 'hr' }),
      ]),
      { refresh: 'wait_for' },
    );
    // 40 queries (two _msearch calls), with blank text and a filter that admits nothing among them.
    const queries = Array.from({ length: 40 }, (_, i) => ({
      text: i % 13 === 5 ? '   ' : `${words[i % words.length]} contact ${i % 3 === 0 ? 'rota' : 'customer'}`,
      k: 1 + (i % 4),
      filters: i % 11 === 7 ? { namespaces: [] } : i % 2 === 0 ? { namespaces: ['crm'] } : {},
    }));
    const together = await index.searchMany(tenant, queries);
    const alone = await Promise.all(queries.map((q) => index.search(tenant, q)));
    expect(together).toEqual(alone);
    expect(together.filter((hits) => hits.length === 0).length).toBe(
      queries.filter((q) => q.text.trim() === '' || q.filters.namespaces?.length === 0).length,
    );
    await expect(index.searchMany(tenant, [{ text: 'x', k: 0, filters: {} }])).rejects.toThrow(/\bk\b/);
  });

  it('never returns a document excluded by status or valid time, though it tops both BM25 and kNN', async () => {
    const tenant = tenantForTest();
    const now = new Date('2025-06-01T00:00:00.000Z');
    await index.upsert(
      tenant,
      [
        memory(tenant, 'deleted-1', QUERY, { status: 'deleted' }),
        memory(tenant, 'ended-1', QUERY, { validTo: new Date('2025-05-01T00:00:00.000Z') }),
        memory(tenant, 'future-1', QUERY, { validFrom: new Date('2025-07-01T00:00:00.000Z') }),
        memory(tenant, 'live-1', 'email contact preferred by the customer', {
          validTo: new Date('2025-06-01T00:00:00.001Z'),
        }),
      ],
      { refresh: 'wait_for' },
    );
    const top = await index.search(tenant, { text: QUERY, k: 3, filters: {} });
    expect(top.map((h) => h.id).sort()).toEqual(['deleted-1', 'ended-1', 'future-1']);
    expect(
      top.every((h) => h.bm25Rank !== undefined && h.bm25Rank <= 3 && h.knnRank !== undefined && h.knnRank <= 3),
    ).toBe(true);

    const byStatus = await index.search(tenant, { text: QUERY, k: 1, filters: { statuses: ['active'] } });
    expect(byStatus[0]?.id).not.toBe('deleted-1');

    const asOf = await index.search(tenant, { text: QUERY, k: 1, filters: { statuses: ['active'], validAt: now } });
    expect(asOf).toEqual([{ id: 'live-1', score: 2 / (RRF_K + 1), bm25Rank: 1, knnRank: 1 }]);
    const later = await index.search(tenant, {
      text: QUERY,
      k: 5,
      filters: { validAt: new Date('2025-08-01T00:00:00Z') },
    });
    expect(later.map((h) => h.id).sort()).toEqual(['deleted-1', 'future-1']);
  });

  it('fuses the two rankings: a document strong in both lists beats one that only matches words', async () => {
    const tenant = tenantForTest();
    await index.upsert(
      tenant,
      [
        memory(tenant, 'both', 'customer prefers email contact in the mornings'),
        memory(tenant, 'lexical', 'weekday weekday weekday'),
        memory(tenant, 'unrelated', 'quarterly revenue grew in germany'),
      ],
      { refresh: 'wait_for' },
    );
    const hits = await index.search(tenant, { text: QUERY, k: 10, filters: {} });
    expect(hits[0]).toMatchObject({ id: 'both', bm25Rank: 1, knnRank: 1 });
    for (const hit of hits) {
      const expected = [hit.bm25Rank, hit.knnRank].reduce<number>(
        (s, r) => (r === undefined ? s : s + 1 / (RRF_K + r)),
        0,
      );
      expect(hit.score).toBeCloseTo(expected, 12);
    }
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
    // BM25 never matches a document without a query term; only kNN can bring it in.
    expect(hits.find((h) => h.id === 'unrelated')?.bm25Rank).toBeUndefined();
  });

  it('updates statuses by id without scripts and reports ids it did not find', async () => {
    const tenant = tenantForTest();
    await index.upsert(
      tenant,
      ['one', 'two', 'three'].map((n) => memory(tenant, n, `${QUERY} ${n}`)),
      { refresh: 'wait_for' },
    );
    const result = await index.updateStatus(tenant, ['one', 'two', 'missing'], 'disputed', { refresh: 'wait_for' });
    expect(result).toEqual({ updated: 2, notFound: 1, failed: [] });
    const disputed = await index.search(tenant, { text: QUERY, k: 10, filters: { statuses: ['disputed'] } });
    expect(disputed.map((h) => h.id).sort()).toEqual(['one', 'two']);
    const active = await index.search(tenant, { text: QUERY, k: 10, filters: { statuses: ['active'] } });
    expect(active.map((h) => h.id)).toEqual(['three']);
  });

  it('surfaces a refused document per item, with its id, status and error type but no content', async () => {
    const tenant = tenantForTest();
    const bad = memory(tenant, 'bad-1', 'secret-canary-text', { confidence: 'not a number' as unknown as number });
    const result = await index.upsert(tenant, [memory(tenant, 'good-1', QUERY), bad], { refresh: 'wait_for' });
    expect(result.indexed).toBe(1);
    expect(result.failed).toEqual([{ id: 'bad-1', status: 400, type: expect.stringMatching(/parsing_exception/) }]);
    expect(JSON.stringify(result)).not.toContain('secret-canary-text');
  });

  it('after purge and expunge, probes by id, text and vector find nothing and no deleted docs remain', async () => {
    const tenant = tenantForTest();
    const canary = 'zebra quasar lemonade canary';
    const doomed = Array.from({ length: 50 }, (_, i) => memory(tenant, `doomed-${i}`, `${canary} number ${i}`));
    const kept = Array.from({ length: 10 }, (_, i) => memory(tenant, `kept-${i}`, `unrelated invoice note ${i}`));
    await index.upsert(tenant, [...doomed, ...kept], { refresh: 'wait_for' });
    const ids = doomed.map((d) => d._id);
    const vector = await embed(doomed[0]!.content);

    const before = await index.probe(tenant, { ids, text: canary, vector });
    expect(before.byId).toHaveLength(50);
    expect(before.byText).toHaveLength(50);
    expect(before.byVector).toContain('doomed-0');

    const live = (await index.indexOf(tenant))!;
    expect(await index.purge(tenant, [...ids, 'never-existed'])).toEqual({
      deleted: 50,
      notFound: 1,
      indices: [{ index: live, role: 'live', deleted: 50 }],
    });
    // Idempotent: a retried purge finds nothing more to delete.
    expect(await index.purge(tenant, ids)).toEqual({
      deleted: 0,
      notFound: 50,
      indices: [{ index: live, role: 'live', deleted: 0 }],
    });
    expect(await index.probe(tenant, { ids, text: canary, vector })).toEqual({
      found: [],
      byId: [],
      byText: [],
      byVector: [],
      bySubject: [],
      byContentHash: [],
      ranOn: { id: [live], text: [live], vector: [live], subject: [] },
    });
    expect(await index.search(tenant, { text: canary, k: 10, filters: {} })).not.toContainEqual(
      expect.objectContaining({ id: expect.stringMatching(/^doomed-/) }),
    );

    // The read-only check sees the deleted documents still in the segments: it is a check that can fail.
    expect((await index.segmentStats(tenant)).deletedDocs).toBeGreaterThan(0);
    // Deletes linger in segments until the retention lease advances (1 s here): wait and retry, bounded.
    let stats = await index.expungeDeleted(tenant);
    const deadline = Date.now() + 45_000;
    while (stats.deletedDocs > 0 && Date.now() < deadline) {
      await sleep(1000);
      stats = await index.expungeDeleted(tenant);
    }
    expect(stats.deletedDocs).toBe(0);
    // Read `_segments` as it is, without the merge the expunge ran: that is what verification relies on.
    const reread = await index.segmentStats(tenant);
    expect(reread.deletedDocs).toBe(0);
    expect(reread.segments).toBeGreaterThan(0);
    const count = await runtime.es.count({
      index: tenantIndexNames(runtime.config.elasticsearch.indexPrefix, tenant).alias,
    });
    expect(count.count).toBe(10);
  });

  it('finds a copy of erased content under another id by its content hash, and only in its own tenant', async () => {
    const tenant = tenantForTest();
    const other = tenantForTest();
    const sentence = 'the card ending 4242 belongs to the subject';
    const original = memory(tenant, 'original', sentence);
    const sameHash = { contentHash: original.contentHash };
    const copy = { ...memory(tenant, 'copy-elsewhere', sentence), ...sameHash, subjects: ['someone-else'] };
    const unrelated = memory(tenant, 'unrelated', 'an unrelated sentence about the weather');
    const foreign = { ...memory(other, 'foreign-copy', sentence), ...sameHash };
    await index.upsert(tenant, [original, copy, unrelated], { refresh: 'wait_for' });
    await index.upsert(other, [foreign], { refresh: 'wait_for' });
    await index.purge(tenant, ['original']);

    const after = await index.probe(tenant, { contentHashes: [original.contentHash] });
    expect(after.byContentHash).toEqual(['copy-elsewhere']);
    expect(after.found).toEqual(['copy-elsewhere']);
  });

  it('lists every document its filters admit, page by page, and so every hit a search under those filters can give', async () => {
    const tenant = tenantForTest();
    const words = ['email', 'phone', 'letter', 'visit', 'fax', 'chat', 'post'];
    const docs = words.flatMap((w, i) => [
      memory(tenant, `crm-${w}`, `the customer prefers ${w} contact`, { namespace: 'crm' }),
      memory(tenant, `hr-${w}`, `staff ${w} rota number ${i}`, { namespace: 'hr' }),
      memory(tenant, `gone-${w}`, `the customer prefers ${w} contact`, { namespace: 'crm', status: 'deleted' }),
    ]);
    await index.upsert(tenant, docs, { refresh: 'wait_for' });
    const filters = { namespaces: ['crm'], statuses: ['active'] };
    const list = async (pageSize: number) => {
      const pages: string[][] = [];
      for await (const page of index.idsUnder(tenant, filters, { pageSize })) pages.push(page);
      return pages;
    };
    // 7 admitted documents: pages of 3, 3 and 1; a page size that divides them ends on an empty read, not a page.
    const pages = await list(3);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    const listed = pages.flat();
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.sort()).toEqual(words.map((w) => `crm-${w}`).sort());
    expect((await list(7)).map((p) => p.length)).toEqual([7]);
    // Whatever the query or k, a search under the same filters only gives listed documents, even ranked last.
    const answers = await index.searchMany(
      tenant,
      [...words, 'rota staff number', 'nothing alike at all'].map((text) => ({ text, k: 50, filters })),
    );
    expect(answers.flat().length).toBeGreaterThan(words.length);
    for (const hit of answers.flat()) expect(listed).toContain(hit.id);
    // Filters that admit nothing, and a tenant with no index, give no page; a bad page size names itself.
    const none: string[][] = [];
    for await (const page of index.idsUnder(tenant, { namespaces: [] })) none.push(page);
    for await (const page of index.idsUnder(uniqueId('t'), {})) none.push(page);
    expect(none).toEqual([]);
    await expect(list(0)).rejects.toThrow(/pageSize/);
  });

  it('treats a tenant without an index as empty for purge, expunge, probe and status updates', async () => {
    const tenant = tenantForTest();
    expect(await index.purge(tenant, ['a', 'b'])).toEqual({ deleted: 0, notFound: 2, indices: [] });
    expect(await index.expungeDeleted(tenant)).toEqual({ deletedDocs: 0, segments: 0, indices: [] });
    expect(await index.segmentStats(tenant)).toEqual({ deletedDocs: 0, segments: 0, indices: [] });
    expect(await index.indexOf(tenant)).toBeNull();
    expect(await index.probe(tenant, { ids: ['a'], text: 'x' })).toEqual({
      found: [],
      byId: [],
      byText: [],
      byVector: [],
      bySubject: [],
      byContentHash: [],
      ranOn: { id: [], text: [], vector: [], subject: [] },
    });
    expect(await index.updateStatus(tenant, ['a'], 'active')).toEqual({ updated: 0, notFound: 1, failed: [] });
    const { alias } = tenantIndexNames(runtime.config.elasticsearch.indexPrefix, tenant);
    // None of these may create an index with a dynamic mapping as a side effect.
    expect(await runtime.es.indices.exists({ index: alias })).toBe(false);
  });
});
