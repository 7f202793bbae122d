import type { Db } from 'mongodb';
import { sha256Hex } from '../../shared/sha256.js';
import { SCAN_DOCS_PER_LOOKUP, SCAN_MIN_IDS, scanWithin } from '../mongo/bounded-scan.js';
import { Collections, duplicateKeysOnly, isDuplicateKey, mapBounded, ownRow } from '../mongo/collections.js';

/**
 * One derivation edge, written once and never updated. Insert-only on purpose: the local server applies an
 * update as read-modify-write without a lock, so concurrent `$addToSet`s on one shared adjacency document
 * lose children silently (measured: 20 concurrent adds to one array leave 13). A lost edge would be a record
 * that erasure never finds.
 */
export interface LineageEdgeDoc {
  /** Hash of (tenant, input, child): re-registering the same edge is a duplicate key, not a second edge. */
  _id: string;
  tenant: string;
  /** The input's id (an event or a memory). */
  input: string;
  /** A record derived directly from `input`. */
  child: string;
}

/** The document `register` writes for one edge (bulk fixtures and benchmarks write the same). */
export function lineageEdgeDoc(tenant: string, input: string, child: string): LineageEdgeDoc {
  return { _id: sha256Hex(JSON.stringify([tenant, input, child])), tenant, input, child };
}

export interface Closure {
  /** Every record transitively derived from the roots, roots excluded, in discovery order. */
  derived: string[];
  /** Sequential rounds of lookups: one per lineage level, whatever the closure's size. */
  rounds: number;
  /** Equality lookups issued (each by tenant and input id, indexed). */
  lookups: number;
  /** Edges read by bounded passes over the tenant's lineage (chosen when the frontier is a large part of it). */
  scanned?: number;
}

/** Derivation lineage as one document per edge, read by input id. */
export interface LineageStore {
  /** Creates the index the closure reads by; idempotent, run at start-up (also ensured on first use). */
  ensureIndexes(): Promise<void>;
  /** Registers a derived record's inputs; idempotent, safe under concurrency. Call before the record is written. */
  register(tenant: string, childId: string, inputIds: readonly string[]): Promise<void>;
  /**
   * `register` for many derived records at once: every edge in unordered inserts of a thousand (an edge already
   * there is a duplicate key, left as it is). Call before the records are written.
   */
  registerMany(tenant: string, derivations: readonly { child: string; inputs: readonly string[] }[]): Promise<void>;
  /**
   * Everything transitively derived from `roots`, level by level with bounded parallel equality lookups — or, when
   * a level is a large part of the tenant's lineage, from one bounded pass that reads it all.
   */
  closure(tenant: string, roots: readonly string[]): Promise<Closure>;
  /** Records derived directly from one input (one indexed equality lookup). */
  childrenOf(tenant: string, input: string): Promise<string[]>;
  /**
   * Removes the edges out of and into erased records (an edge into one would still say which input it was
   * derived from); returns how many edges were removed.
   */
  forget(tenant: string, ids: readonly string[]): Promise<number>;
  /**
   * The edges out of and into each of `ids`, by id, from one bounded pass over the tenant's lineage; null when the
   * tenant holds too much lineage for the pass to pay (then `forget` by id is the way).
   */
  edgesTouching(tenant: string, ids: readonly string[]): Promise<Map<string, string[]> | null>;
  /** Deletes edges by `_id`; returns how many were there. */
  forgetEdges(tenant: string, edgeIds: readonly string[]): Promise<number>;
}

export function createMongoLineageStore(db: Db, options: { concurrency?: number } = {}): LineageStore {
  const lineage = db.collection<LineageEdgeDoc>(Collections.lineage);
  const concurrency = options.concurrency ?? 32;
  let indexed: Promise<void> | null = null;
  const ensureIndexes = (): Promise<void> => {
    indexed ??= Promise.all([
      lineage.createIndex({ input: 1, tenant: 1 }),
      lineage.createIndex({ child: 1, tenant: 1 }),
    ]).then(
      () => undefined,
      (error: unknown) => {
        indexed = null;
        throw error;
      },
    );
    return indexed;
  };
  const childrenOf = async (tenant: string, input: string): Promise<string[]> => {
    const docs = await lineage
      .find({ input, tenant }, { projection: { _id: 0, child: 1 }, batchSize: 10_000 })
      .toArray();
    return docs.map((d) => d.child);
  };
  return {
    ensureIndexes,
    childrenOf: async (tenant, input) => {
      await ensureIndexes();
      return childrenOf(tenant, input);
    },
    async register(tenant, childId, inputIds) {
      await ensureIndexes();
      await mapBounded([...new Set(inputIds)], concurrency, async (input) => {
        try {
          await lineage.insertOne(lineageEdgeDoc(tenant, input, childId));
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
      });
    },
    async registerMany(tenant, derivations) {
      await ensureIndexes();
      const docs = [
        ...new Map(
          derivations
            .flatMap(({ child, inputs }) => inputs.map((input) => lineageEdgeDoc(tenant, input, child)))
            .map((d) => [d._id, d]),
        ).values(),
      ];
      for (let i = 0; i < docs.length; i += 1000) {
        try {
          await lineage.insertMany(docs.slice(i, i + 1000), { ordered: false });
        } catch (error) {
          if (!duplicateKeysOnly(error)) throw error;
        }
      }
    },
    async closure(tenant, roots) {
      await ensureIndexes();
      const seen = new Set(roots);
      const derived: string[] = [];
      let frontier = [...seen];
      let rounds = 0;
      let lookups = 0;
      let scanned = 0;
      // Once the whole tenant's lineage is in hand (a bounded pass that fit its budget), the rest is walked here.
      let graph: Map<string, string[]> | null = null;
      let triedBudget = 0;
      while (frontier.length > 0) {
        rounds++;
        const budget = frontier.length * SCAN_DOCS_PER_LOOKUP;
        if (!graph && frontier.length >= SCAN_MIN_IDS && budget > triedBudget) {
          triedBudget = budget;
          const edges = new Map<string, string[]>();
          let read = 0;
          const complete = await scanWithin(
            lineage,
            { tenant },
            budget,
            (edge) => {
              read++;
              const children = edges.get(edge.input);
              if (children) children.push(edge.child);
              else edges.set(edge.input, [edge.child]);
            },
            { _id: 0, input: 1, child: 1 },
          );
          scanned += read;
          if (complete) graph = edges;
        }
        let levels: string[][];
        if (graph) {
          const known = graph;
          levels = frontier.map((id) => known.get(id) ?? []);
        } else {
          lookups += frontier.length;
          levels = await mapBounded(frontier, concurrency, (id) => childrenOf(tenant, id));
        }
        const next: string[] = [];
        for (const children of levels) {
          for (const child of children) {
            if (seen.has(child)) continue;
            seen.add(child);
            derived.push(child);
            next.push(child);
          }
        }
        frontier = next;
      }
      return { derived, rounds, lookups, scanned };
    },
    async edgesTouching(tenant, ids) {
      await ensureIndexes();
      const wanted = new Set(ids);
      const touching = new Map<string, string[]>();
      const add = (id: string, edge: string) => {
        const list = touching.get(id);
        if (list) list.push(edge);
        else touching.set(id, [edge]);
      };
      const complete = await scanWithin(
        lineage,
        { tenant },
        2 * wanted.size * SCAN_DOCS_PER_LOOKUP,
        (edge) => {
          if (wanted.has(edge.input)) add(edge.input, edge._id);
          if (wanted.has(edge.child)) add(edge.child, edge._id);
        },
        { _id: 1, input: 1, child: 1 },
      );
      return complete ? touching : null;
    },
    async forgetEdges(tenant, edgeIds) {
      const deleted = await mapBounded([...new Set(edgeIds)], concurrency, (_id) =>
        lineage.deleteOne(ownRow<LineageEdgeDoc>(tenant, _id)),
      );
      return deleted.reduce((n, r) => n + r.deletedCount, 0);
    },
    async forget(tenant, ids) {
      await ensureIndexes();
      const unique = [...new Set(ids)];
      const out = await mapBounded(unique, concurrency, (input) => lineage.deleteMany({ input, tenant }));
      const into = await mapBounded(unique, concurrency, (child) => lineage.deleteMany({ child, tenant }));
      return [...out, ...into].reduce((n, r) => n + r.deletedCount, 0);
    },
  };
}
