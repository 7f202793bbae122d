/**
 * Reads of many ids by one bounded pass over the tenant (the local server reads every document for `$in`): the
 * pass must return exactly what a lookup per id returns — same records, same order, nothing of another tenant,
 * nothing missing — both when it fits its budget and when it gives up half-way and the lookups finish the job.
 * The same for the lineage closure and for forgetting lineage edges. Real database; a tenant per case.
 */
import fc from 'fast-check';
import type { Collection, Db, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import {
  createMongoLineageStore,
  lineageEdgeDoc,
  type LineageEdgeDoc,
} from '../../../src/substrate/lineage/lineage-store.js';
import { findByIds, SCAN_DOCS_PER_LOOKUP, SCAN_MIN_IDS } from '../../../src/substrate/mongo/bounded-scan.js';
import { Collections, findOwn, mapBounded, ownRow } from '../../../src/substrate/mongo/collections.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { referenceClosure, type LineageEdge } from '../../unit/lineage/closure-model.js';

interface Doc {
  _id: string;
  tenant: string;
  n: number;
}

let runtime: Runtime;
let docs: Collection<Doc>;
const tenants: string[] = [];

/** The collection, with the methods it is called through counted. */
function counting<T extends Document>(collection: Collection<T>, calls: Record<string, number>): Collection<T> {
  return new Proxy(collection, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls[String(property)] = (calls[String(property)] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

function countingDb(db: Db, calls: Record<string, number>): Db {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'collection') return (name: string) => counting(target.collection(name), calls);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `count` documents of the tenant tagged `field: value` (untagged when null), each id naming its tag. */
function taggedDocs<F extends string>(tenant: string, field: F, value: string | null, count: number) {
  return Array.from({ length: count }, (_, n) => ({
    _id: `${tenant}-${value ?? 'none'}-${String(n).padStart(4, '0')}`,
    tenant,
    n,
    ...(value ? { [field]: value } : {}),
  })) as (Doc & Partial<Record<F, string>>)[];
}

async function tenantWith(count: number): Promise<{ tenant: string; ids: string[] }> {
  const tenant = uniqueId('scan');
  tenants.push(tenant);
  const ids = Array.from({ length: count }, (_, n) => `${tenant}-${String(n).padStart(5, '0')}`);
  for (let i = 0; i < ids.length; i += 1000) {
    await docs.insertMany(
      ids.slice(i, i + 1000).map((_id, k) => ({ _id, tenant, n: i + k })),
      { ordered: false },
    );
  }
  return { tenant, ids };
}

beforeAll(async () => {
  runtime = testRuntime();
  // A collection of this test's own: the stores' collections carry indexes this test does not need.
  docs = runtime.db.collection<Doc>('bounded_scan_test');
  await docs.createIndex({ tenant: 1 });
  await docs.createIndex({ tenant: 1, stageId: 1 });
  await createMongoLineageStore(runtime.db).ensureIndexes();
});

afterAll(async () => {
  const lineage = runtime.db.collection(Collections.lineage);
  await mapBounded(tenants, 4, async (tenant) => {
    await docs.deleteMany({ tenant });
    await lineage.deleteMany({ tenant });
  });
  await runtime.close();
});

describe('reading many ids of a tenant', () => {
  let small: { tenant: string; ids: string[] };
  let other: { tenant: string; ids: string[] };
  beforeAll(async () => {
    small = await tenantWith(1200);
    other = await tenantWith(300);
  });

  it('returns what a lookup per id returns, in the order asked, whether the pass fits its budget or not (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(small.ids, { minLength: SCAN_MIN_IDS, maxLength: 700 }),
        fc.shuffledSubarray(other.ids, { maxLength: 40 }),
        fc.integer({ min: 0, max: 40 }),
        fc.boolean(),
        async (mine, foreign, missing, duplicated) => {
          const half = Math.floor(foreign.length / 2);
          const gone = Array.from({ length: missing }, (_, k) => `${small.tenant}-gone-${k}`);
          const ids = [
            ...foreign.slice(0, half),
            ...mine.slice(0, 100),
            ...gone,
            ...mine.slice(100),
            ...foreign.slice(half),
          ];
          if (duplicated) ids.push(mine[0]!);
          const calls: Record<string, number> = {};
          const byScan = await findByIds(counting(docs, calls), small.tenant, ids);
          const byLookup = await findByIds(docs, small.tenant, ids, { scan: false });
          expect(byScan).toEqual(byLookup);
          expect(byScan.map((d) => d._id)).toEqual([...new Set(ids)].filter((id) => mine.includes(id)));
          // Budget = ids × SCAN_DOCS_PER_LOOKUP ≥ 1 024 of a 1 200-document tenant: the pass fits when the ids are many
          // enough, and then no lookup is sent at all.
          const fits = new Set(ids).size * SCAN_DOCS_PER_LOOKUP >= 1200;
          if (fits) expect(calls.findOne ?? 0).toBe(0);
          expect(calls.find).toBe(1);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('gives up the pass at its budget in a tenant much larger than the ids, and the lookups finish it', async () => {
    const large = await tenantWith(3000);
    const wanted = large.ids.filter((_, n) => n % 10 === 7); // 300 ids, spread over the whole tenant
    const calls: Record<string, number> = {};
    const found = await findByIds(counting(docs, calls), large.tenant, wanted);
    expect(found.map((d) => d._id)).toEqual(wanted);
    // The pass read at most 1 200 documents, so it settled some ids and left the others to lookups.
    expect(calls.findOne).toBeGreaterThan(0);
    expect(calls.findOne).toBeLessThan(wanted.length);
  });

  it('narrowed to part of the tenant, reads only that part and still returns the ids outside it', async () => {
    const tenant = uniqueId('scan');
    tenants.push(tenant);
    // 600 documents of the part asked for, 600 of another part, and 40 written before parts were recorded.
    const docsOf = (part: string | null, count: number) => taggedDocs(tenant, 'part', part, count);
    const parted = docs as unknown as Collection<Doc & { part?: string }>;
    await parted.insertMany([...docsOf('a', 600), ...docsOf('b', 600), ...docsOf(null, 40)]);
    const wanted = [...docsOf('a', 600).map((d) => d._id), ...docsOf(null, 40).map((d) => d._id), `${tenant}-a-gone`];
    const calls: Record<string, number> = {};
    const found = await findByIds(counting(parted, calls), tenant, wanted, { within: { part: 'a' } });
    expect(found.map((d) => d._id)).toEqual(wanted.slice(0, 640));
    // One pass over part a, then a lookup for each id it did not meet: the 40 without a part and the missing one.
    expect(calls.find).toBe(1);
    expect(calls.findOne).toBe(41);
  });

  it('written together by one stage, reads the stage in one query below the threshold; ids outside it by lookup', async () => {
    const tenant = uniqueId('scan');
    tenants.push(tenant);
    const staged = docs as unknown as Collection<Doc & { stageId?: string }>;
    const docsOf = (stageId: string | null, count: number, t = tenant) => taggedDocs(t, 'stageId', stageId, count);
    // The stage's 50, another stage's 50 in the same tenant, a duplicate recorded earlier without a stage, and the same
    // stage id in another tenant (a stage id names nothing across tenants).
    const mine = docsOf('stg_a', 50);
    const foreignTenant = uniqueId('scan');
    tenants.push(foreignTenant);
    await staged.insertMany([
      ...mine,
      ...docsOf('stg_b', 50),
      ...docsOf(null, 3),
      ...docsOf('stg_a', 5, foreignTenant),
    ]);
    const wanted = [
      mine[10]!._id,
      `${tenant}-none-0001`,
      ...mine.slice(0, 10).map((d) => d._id),
      `${foreignTenant}-stg_a-0000`,
      `${tenant}-stg_b-0003`,
      `${tenant}-gone`,
    ];
    const calls: Record<string, number> = {};
    const found = await findByIds(counting(staged, calls), tenant, wanted, { batch: { stageId: 'stg_a' } });
    expect(found.map((d) => d._id)).toEqual([
      mine[10]!._id,
      `${tenant}-none-0001`,
      ...mine.slice(0, 10).map((d) => d._id),
      `${tenant}-stg_b-0003`,
    ]);
    expect(found).toEqual(await findByIds(staged, tenant, wanted, { scan: false }));
    // One query for the stage; a lookup for each of the four ids it did not hold (another tenant's, another stage's,
    // the one without a stage, the missing one). Without the stage, eleven ids below the threshold: all by lookup.
    expect(calls.find).toBe(1);
    expect(calls.findOne).toBe(4);
  });

  it('gives up reading a stage at the budget when it holds far more than the ids asked for', async () => {
    const tenant = uniqueId('scan');
    tenants.push(tenant);
    const staged = docs as unknown as Collection<Doc & { stageId?: string }>;
    const all = Array.from({ length: 400 }, (_, n) => ({
      _id: `${tenant}-${String(n).padStart(4, '0')}`,
      tenant,
      n,
      stageId: 'stg_big',
    }));
    await staged.insertMany(all);
    const wanted = all.filter((_, n) => n % 40 === 39).map((d) => d._id); // 10 ids: a budget of 40 documents
    const calls: Record<string, number> = {};
    const found = await findByIds(counting(staged, calls), tenant, wanted, { batch: { stageId: 'stg_big' } });
    expect(found.map((d) => d._id)).toEqual(wanted);
    expect(calls.find).toBe(1);
    expect(calls.findOne).toBeGreaterThan(0);
  });

  it("finds by lookup nothing for another tenant's id, an id with a NUL or an operator-like string", async () => {
    const ids = [other.ids[0]!, `${small.ids[0]}\u0000`, '{"$ne":null}', small.ids[1]!, '{"$gt":""}'];
    for (const scan of [true, false])
      expect((await findByIds(docs, small.tenant, ids, { scan })).map((d) => d._id)).toEqual([small.ids[1]]);
  });

  it('never reads by lookup below the scan threshold', async () => {
    const calls: Record<string, number> = {};
    const ids = small.ids.slice(0, SCAN_MIN_IDS - 1);
    expect((await findByIds(counting(docs, calls), small.tenant, ids)).map((d) => d._id)).toEqual(ids);
    expect(calls.find ?? 0).toBe(0);
    expect(calls.findOne).toBe(ids.length);
  });
});

/** Roots, each the head of a chain of three derived records, with cross edges, diamonds and a cycle. */
function layeredGraph(tenant: string, roots: number): { roots: string[]; edges: LineageEdge[] } {
  const id = (level: number, n: number) => `${tenant}:L${level}:${n}`;
  const edges: LineageEdge[] = [];
  for (let n = 0; n < roots; n++) {
    for (let level = 0; level < 3; level++) edges.push({ input: id(level, n), child: id(level + 1, n) });
    if (n % 7 === 0) edges.push({ input: id(1, n), child: id(3, (n + 1) % roots) });
    if (n % 11 === 0) edges.push({ input: id(3, n), child: id(1, n) });
  }
  return { roots: Array.from({ length: roots }, (_, n) => id(0, n)), edges };
}

describe('lineage read in one bounded pass', () => {
  const write = async (tenant: string, edges: readonly LineageEdge[]) => {
    const lineage = runtime.db.collection<LineageEdgeDoc>(Collections.lineage);
    const unique = [
      ...new Map(
        edges.map((e) => [lineageEdgeDoc(tenant, e.input, e.child)._id, lineageEdgeDoc(tenant, e.input, e.child)]),
      ).values(),
    ];
    for (let i = 0; i < unique.length; i += 1000)
      await lineage.insertMany(unique.slice(i, i + 1000), { ordered: false });
  };

  it('walks the same closure as the reference without a lookup when the tenant lineage fits the budget', async () => {
    const tenant = uniqueId('scan-lin');
    tenants.push(tenant);
    const graph = layeredGraph(tenant, 300);
    await write(tenant, graph.edges);
    const calls: Record<string, number> = {};
    const closure = await createMongoLineageStore(countingDb(runtime.db, calls)).closure(tenant, graph.roots);
    const expected = referenceClosure(graph.edges, graph.roots);
    expect(new Set(closure.derived)).toEqual(expected.derived);
    expect(closure.derived).toHaveLength(expected.derived.size);
    expect(closure.rounds).toBe(expected.levels.length);
    expect(closure.lookups).toBe(0);
    expect(closure.scanned).toBe(new Set(graph.edges.map((e) => `${e.input}>${e.child}`)).size);
  });

  it('falls back to lookups, with the same closure, when the tenant holds far more lineage than the frontier', async () => {
    const tenant = uniqueId('scan-lin');
    tenants.push(tenant);
    const graph = layeredGraph(tenant, 300);
    const unrelated = layeredGraph(`${tenant}-x`, 2000).edges;
    await write(tenant, [...graph.edges, ...unrelated]);
    const closure = await createMongoLineageStore(runtime.db).closure(tenant, graph.roots);
    const expected = referenceClosure(graph.edges, graph.roots);
    expect(new Set(closure.derived)).toEqual(expected.derived);
    expect(closure.lookups).toBeGreaterThan(0);
  });

  it('finds and forgets exactly the edges out of and into the ids, leaving every other edge', async () => {
    const tenant = uniqueId('scan-lin');
    tenants.push(tenant);
    const graph = layeredGraph(tenant, 300);
    await write(tenant, graph.edges);
    const forgotten = new Set([
      ...graph.roots.slice(0, 150),
      ...graph.roots.slice(0, 150).map((r) => r.replace(':L0:', ':L2:')),
    ]);
    const store = createMongoLineageStore(runtime.db);
    const expectedGone = graph.edges.filter((e) => forgotten.has(e.input) || forgotten.has(e.child));
    // The purge's way: the edges found in one pass, then deleted by _id.
    const touching = await store.edgesTouching(tenant, [...forgotten]);
    expect(touching).not.toBeNull();
    expect(new Set([...touching!.values()].flat()).size).toBe(expectedGone.length);
    expect(await store.forget(tenant, [...forgotten])).toBe(expectedGone.length);
    const left = await runtime.db.collection(Collections.lineage).countDocuments({ tenant });
    expect(left).toBe(graph.edges.length - expectedGone.length);
    expect(await store.forget(tenant, [...forgotten])).toBe(0);
  });

  it('deletes by id nothing of another tenant: edges, and rows through the row filter every store deletes by', async () => {
    const tenant = uniqueId('scan-own');
    const other = `${tenant}-x`;
    tenants.push(tenant, other);
    const graph = layeredGraph(tenant, 50);
    await write(tenant, graph.edges);
    const store = createMongoLineageStore(runtime.db);
    const edgeIds = [...new Set([...(await store.edgesTouching(tenant, graph.roots))!.values()].flat())];
    expect(edgeIds.length).toBeGreaterThan(0);
    // Another tenant naming these edges' ids deletes none of them; the tenant itself deletes them all.
    expect(await store.forgetEdges(other, edgeIds)).toBe(0);
    expect(await store.forgetEdges(tenant, edgeIds)).toBe(edgeIds.length);
    const rows = taggedDocs(tenant, 'stageId', 'own', 5);
    await docs.insertMany(rows);
    const filterOf = (t: string, id: string) => ownRow<Doc>(t, id);
    expect(await docs.countDocuments(filterOf(other, rows[0]!._id))).toBe(0);
    expect((await docs.deleteOne(filterOf(other, rows[0]!._id))).deletedCount).toBe(0);
    expect((await docs.updateOne(filterOf(other, rows[1]!._id), { $set: { n: -1 } })).matchedCount).toBe(0);
    expect(await docs.countDocuments({ tenant })).toBe(5);
    expect((await docs.deleteOne(filterOf(tenant, rows[0]!._id))).deletedCount).toBe(1);
    expect(await findOwn(docs, other, rows[1]!._id)).toBeNull();
    expect((await findOwn(docs, tenant, rows[1]!._id))?.n).toBe(rows[1]!.n);
  });
});
