import type { Db } from 'mongodb';
import { Collections, mapBounded } from '../mongo/collections.js';

interface AdjacencyDoc {
  /** The input's id (an event or a memory). */
  _id: string;
  tenant: string;
  /** Records derived directly from this input. */
  children: string[];
}

export interface Closure {
  /** Every record transitively derived from the roots, roots excluded, in discovery order. */
  derived: string[];
  /** Sequential rounds of lookups: one per lineage level, whatever the closure's size. */
  rounds: number;
  /** Equality lookups issued (each by `_id`). */
  lookups: number;
}

/** Derivation lineage as adjacency documents keyed by the input's `_id`. */
export interface LineageStore {
  /** Registers a derived record's inputs; idempotent. Call before the record is written. */
  register(tenant: string, childId: string, inputIds: readonly string[]): Promise<void>;
  /** Everything transitively derived from `roots`, level by level with bounded parallel `_id` lookups. */
  closure(tenant: string, roots: readonly string[]): Promise<Closure>;
  /** Removes the adjacency documents of erased records. */
  forget(tenant: string, ids: readonly string[]): Promise<number>;
}

export function createMongoLineageStore(db: Db, options: { concurrency?: number } = {}): LineageStore {
  const lineage = db.collection<AdjacencyDoc>(Collections.lineage);
  const concurrency = options.concurrency ?? 32;
  return {
    async register(tenant, childId, inputIds) {
      await mapBounded([...new Set(inputIds)], concurrency, (inputId) =>
        lineage.updateOne(
          { _id: inputId, tenant },
          { $addToSet: { children: childId }, $setOnInsert: { tenant } },
          { upsert: true },
        ),
      );
    },
    async closure(tenant, roots) {
      const seen = new Set(roots);
      const derived: string[] = [];
      let frontier = [...seen];
      let rounds = 0;
      let lookups = 0;
      while (frontier.length > 0) {
        rounds++;
        lookups += frontier.length;
        const docs = await mapBounded(frontier, concurrency, (id) => lineage.findOne({ _id: id }));
        const next: string[] = [];
        for (const doc of docs) {
          if (!doc || doc.tenant !== tenant) continue;
          for (const child of doc.children) {
            if (seen.has(child)) continue;
            seen.add(child);
            derived.push(child);
            next.push(child);
          }
        }
        frontier = next;
      }
      return { derived, rounds, lookups };
    },
    async forget(tenant, ids) {
      const results = await mapBounded(ids, concurrency, (id) => lineage.deleteOne({ _id: id, tenant }));
      return results.reduce((n, r) => n + r.deletedCount, 0);
    },
  };
}
