/**
 * Closure on generated lineage graphs large enough for round trips to matter (≥ 10 000 records, depth ≥ 5),
 * tenant isolation with identical ids, and registration under concurrency — against the real database.
 *
 * The large graphs are bulk-written with `insertMany` of exactly the documents `register` writes
 * (`lineageEdgeDoc`; a test below checks that `register` writes those), because registering 20 000 edges one
 * record at a time would take most of the time budget on the local server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import {
  createMongoLineageStore,
  lineageEdgeDoc,
  type LineageEdgeDoc,
  type Closure,
  type LineageStore,
} from '../../../src/substrate/lineage/lineage-store.js';
import { Collections, mapBounded } from '../../../src/substrate/mongo/collections.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { layeredGraph, referenceClosure, registrations, type LineageEdge } from '../../unit/lineage/closure-model.js';

let runtime: Runtime;
let store: LineageStore;
const tenants: string[] = [];

function newTenant(): string {
  const tenant = uniqueId('t');
  tenants.push(tenant);
  return tenant;
}

async function bulkWrite(tenant: string, edges: readonly LineageEdge[]): Promise<void> {
  const lineage = runtime.db.collection<LineageEdgeDoc>(Collections.lineage);
  const docs = edges.map((e) => lineageEdgeDoc(tenant, e.input, e.child));
  for (let i = 0; i < docs.length; i += 1000) await lineage.insertMany(docs.slice(i, i + 1000));
}

/** A layered graph of `depth` levels above `width` source records, written for a tenant of its own. */
async function writtenGraph(depth: number, width: number, seed: number) {
  const tenant = newTenant();
  const graph = layeredGraph({ prefix: tenant, depth, width, seed });
  await bulkWrite(tenant, graph.edges);
  return { tenant, ...graph };
}

beforeAll(async () => {
  runtime = testRuntime();
  store = createMongoLineageStore(runtime.db);
  await store.ensureIndexes();
});

afterAll(async () => {
  const lineage = runtime.db.collection(Collections.lineage);
  await mapBounded(tenants, 4, (tenant) => lineage.deleteMany({ tenant }));
  await runtime.close();
});

describe('lineage closure on large generated graphs', () => {
  type Written = Awaited<ReturnType<typeof writtenGraph>>;
  let large: Written;
  let small: Written;
  let deep: Written;
  let shallow: Written;
  /** The closure of every source of the large graph: the one expensive walk, shared by the tests below. */
  let ofLarge: Closure;

  beforeAll(async () => {
    // 10 200 records at depth 5; a tenth of that at the same depth; deeper and shallower graphs of that size.
    [large, small, deep, shallow] = await Promise.all([
      writtenGraph(5, 1700, 1),
      writtenGraph(5, 170, 2),
      writtenGraph(10, 170, 3),
      writtenGraph(2, 170, 4),
    ]);
    ofLarge = await store.closure(large.tenant, large.levels[0]!);
  }, 180_000);

  it('over 10 000 records of depth 5, the closure of every source equals the reference BFS, in depth + 1 rounds', () => {
    const roots = large.levels[0]!;
    expect(large.levels.flat().length).toBeGreaterThanOrEqual(10_000);
    const expected = referenceClosure(large.edges, roots);
    expect(expected.levels).toHaveLength(6);
    expect(ofLarge.derived).toHaveLength(expected.derived.size);
    expect(new Set(ofLarge.derived)).toEqual(expected.derived);
    // One round per level: five levels of derived records, plus the round that finds the last level has none.
    expect(ofLarge.rounds).toBe(6);
    expect(ofLarge.lookups).toBe(roots.length + expected.derived.size);
  });

  it('the round count follows depth, not closure size', async () => {
    const sourcesOf = (g: Written) => g.levels[0]!;
    const [ofSmall, ofDeep, ofShallow, ofOneSource] = await Promise.all([
      store.closure(small.tenant, sourcesOf(small)),
      store.closure(deep.tenant, sourcesOf(deep)),
      store.closure(shallow.tenant, sourcesOf(shallow)),
      // One source of the deep graph: a much smaller closure, just as deep.
      store.closure(deep.tenant, [deep.levels[0]![0]!]),
    ]);
    // Ten times the records, the same depth: the same rounds.
    expect(ofLarge.lookups).toBe(10 * ofSmall.lookups);
    expect(ofLarge.rounds).toBe(6);
    expect(ofSmall.rounds).toBe(6);
    // Deeper graph, more rounds; shallower, fewer — rounds = depth + 1 each time.
    expect(ofShallow.rounds).toBe(3);
    expect(ofDeep.rounds).toBe(11);
    expect(ofOneSource.rounds).toBe(11);
    expect(ofOneSource.derived.length).toBeLessThan(ofDeep.derived.length);
    expect(new Set(ofOneSource.derived)).toEqual(referenceClosure(deep.edges, [deep.levels[0]![0]!]).derived);
  }, 120_000);

  it('the closure of one subject follows merges into other subjects, as the reference does', async () => {
    const roots = small.levels[0]!.filter((id) => small.subjectOf.get(id) === 7);
    const closure = await store.closure(small.tenant, roots);
    const expected = referenceClosure(small.edges, roots);
    expect(new Set(closure.derived)).toEqual(expected.derived);
    expect(closure.derived.some((id) => small.subjectOf.get(id) !== 7)).toBe(true);
    expect(closure.rounds).toBe(expected.levels.length);
  }, 60_000);
});

describe('lineage writes and tenants', () => {
  it('register writes one edge document per distinct input, the documents the bulk fixture writes', async () => {
    const tenant = newTenant();
    await store.register(tenant, `${tenant}-m`, [`${tenant}-e1`, `${tenant}-e2`, `${tenant}-e1`]);
    const stored = await runtime.db
      .collection<LineageEdgeDoc>(Collections.lineage)
      .find({ tenant })
      .sort({ input: 1 })
      .toArray();
    expect(stored).toEqual([
      lineageEdgeDoc(tenant, `${tenant}-e1`, `${tenant}-m`),
      lineageEdgeDoc(tenant, `${tenant}-e2`, `${tenant}-m`),
    ]);
  });

  it('tenants with the same record ids and different lineage never see each other’s edges', async () => {
    // The same ids ("shared-l0-0", …) in two tenants, with different edges; a third tenant has none.
    const first = layeredGraph({ prefix: 'shared', depth: 3, width: 60, seed: 11 });
    const second = layeredGraph({ prefix: 'shared', depth: 3, width: 60, seed: 12 });
    const [a, b, bystander] = [newTenant(), newTenant(), newTenant()];
    await Promise.all([bulkWrite(a, first.edges), bulkWrite(b, second.edges)]);
    const roots = first.levels[0]!.slice(0, 5);
    const expectedA = referenceClosure(first.edges, roots).derived;
    const expectedB = referenceClosure(second.edges, roots).derived;
    expect(expectedA).not.toEqual(expectedB);

    const [ofA, ofB, ofBystander] = await Promise.all([
      store.closure(a, roots),
      store.closure(b, roots),
      store.closure(bystander, roots),
    ]);
    expect(new Set(ofA.derived)).toEqual(expectedA);
    expect(new Set(ofB.derived)).toEqual(expectedB);
    expect(ofBystander).toEqual({ derived: [], rounds: 1, lookups: roots.length, scanned: 0 });
  });

  it('registrations racing on one input lose no edge', async () => {
    const tenant = newTenant();
    const event = `${tenant}-event`;
    const children = Array.from({ length: 60 }, (_, i) => `${tenant}-m${i}`);
    // Sixty writers derive from the same event at once, each also citing a parent of its own; then all retry.
    await Promise.all(children.map((child, i) => store.register(tenant, child, [event, `${tenant}-p${i}`])));
    await Promise.all(children.map((child, i) => store.register(tenant, child, [`${tenant}-p${i}`, event])));
    const closure = await store.closure(tenant, [event]);
    expect(new Set(closure.derived)).toEqual(new Set(children));
    expect(closure.derived).toHaveLength(60);
  });

  it('forgetting erased records removes the edges out of and into them, so no edge names an erased record', async () => {
    const tenant = newTenant();
    const id = (name: string) => `${tenant}-${name}`;
    const edges: LineageEdge[] = [
      { input: id('e'), child: id('m1') },
      { input: id('m1'), child: id('m2') },
      { input: id('e'), child: id('m3') },
    ];
    for (const [child, inputs] of registrations(edges)) await store.register(tenant, child, inputs);
    // e→m1 (into) and m1→m2 (out) go; e→m3 stays.
    expect(await store.forget(tenant, [id('m1'), id('m1'), id('none')])).toBe(2);
    expect((await store.closure(tenant, [id('e')])).derived).toEqual([id('m3')]);
    expect(await store.childrenOf(tenant, id('m1'))).toEqual([]);
    expect(await store.forget(`${tenant}x`, [id('e')])).toBe(0);
    expect((await store.closure(tenant, [id('e')])).derived).toHaveLength(1);
  });
});
