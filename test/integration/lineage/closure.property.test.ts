/**
 * The store's level-by-level closure against the reference BFS, on random small lineage graphs written
 * through `register` into the real database (a tenant per run). The store reads through a recording view of
 * the collection, so the test also sees every query it sends: only indexed equality lookups, each on a
 * record of the closure, none twice, no writes.
 */
import fc from 'fast-check';
import type { Collection, Db, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { createMongoLineageStore, type LineageStore } from '../../../src/substrate/lineage/lineage-store.js';
import { Collections, mapBounded } from '../../../src/substrate/mongo/collections.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { lineageGraphs, referenceClosure, registrations, withPrefix } from '../../unit/lineage/closure-model.js';

interface Call {
  method: string;
  args: unknown[];
}

/** The same database, with every collection method call recorded before it is forwarded. */
function recordingDb(db: Db, calls: Call[]): Db {
  const record = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, property) {
        const value: unknown = Reflect.get(object, property, object);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push({ method: String(property), args });
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });
  return new Proxy(db, {
    get(target, property) {
      if (property === 'collection') {
        return (name: string): Collection<Document> => record(target.collection(name));
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

let runtime: Runtime;
let store: LineageStore;
const tenants: string[] = [];

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

describe('lineage closure against the reference BFS (property, real database)', () => {
  it('equals the reference on random graphs with diamonds, merges and cycles, in one round per level, touching only the closure', async () => {
    await fc.assert(
      fc.asyncProperty(lineageGraphs(25), async (generated) => {
        const tenant = uniqueId('t');
        tenants.push(tenant);
        const graph = withPrefix(generated, tenant);
        // As writers do: each derived record registers all its inputs once, before it is written.
        for (const [child, inputs] of registrations(graph.edges)) await store.register(tenant, child, inputs);

        const calls: Call[] = [];
        const watched = createMongoLineageStore(recordingDb(runtime.db, calls));
        const closure = await watched.closure(tenant, graph.roots);
        const expected = referenceClosure(graph.edges, graph.roots);

        expect(new Set(closure.derived)).toEqual(expected.derived);
        expect(closure.derived).toHaveLength(expected.derived.size);
        for (const root of graph.roots) expect(closure.derived).not.toContain(root);
        expect(closure.rounds).toBe(expected.levels.length);
        expect(closure.lookups).toBe(new Set(graph.roots).size + expected.derived.size);
        // Discovery order is level order: nothing is reported before the level above it is complete.
        const levels = closure.derived.map((id) => expected.levelOf.get(id)!);
        expect(levels).toEqual([...levels].sort((a, b) => a - b));

        const reads = calls.filter((c) => c.method !== 'createIndex');
        expect(reads.every((c) => c.method === 'find')).toBe(true);
        const filters = reads.map((c) => c.args[0] as Record<string, unknown>);
        for (const filter of filters) expect(Object.keys(filter).sort()).toEqual(['input', 'tenant']);
        expect(filters.every((f) => f.tenant === tenant && typeof f.input === 'string')).toBe(true);
        const looked = filters.map((f) => f.input as string);
        expect(looked).toHaveLength(new Set(looked).size);
        expect(new Set(looked)).toEqual(new Set([...graph.roots, ...expected.derived]));
      }),
      { numRuns: 25 },
    );
  }, 180_000);

  it('registering the same graph again changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(lineageGraphs(15), async (generated) => {
        const tenant = uniqueId('t');
        tenants.push(tenant);
        const graph = withPrefix(generated, tenant);
        const writes = [...registrations(graph.edges)];
        for (const [child, inputs] of writes) await store.register(tenant, child, inputs);
        const once = await store.closure(tenant, graph.roots);
        await Promise.all(writes.map(([child, inputs]) => store.register(tenant, child, [...inputs].reverse())));
        const twice = await store.closure(tenant, graph.roots);
        expect(new Set(twice.derived)).toEqual(new Set(once.derived));
        expect(twice.derived).toHaveLength(once.derived.length);
        const stored = await runtime.db.collection(Collections.lineage).countDocuments({ tenant });
        expect(stored).toBe(new Set(graph.edges.map((e) => `${e.input} ${e.child}`)).size);
      }),
      { numRuns: 10 },
    );
  }, 120_000);
});
