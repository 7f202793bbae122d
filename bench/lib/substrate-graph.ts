/** A generated lineage graph for the closure comparison, and the plain-driver BFS it is compared with. */
import type { Collection } from 'mongodb';
import type { LineageEdgeDoc } from '../../src/substrate/lineage/lineage-store.js';
import { rng } from './substrate-measure.js';

export interface Edge {
  input: string;
  child: string;
}

/**
 * `width` source records and `depth` levels of `width` derived records; record j of level k derives from
 * record j of level k-1 and up to two random others of that level, so the closure of the sources has depth
 * `depth` exactly.
 */
export function layeredGraph(
  prefix: string,
  depth: number,
  width: number,
  seed = 1,
): { levels: string[][]; edges: Edge[] } {
  const random = rng(seed);
  const levels: string[][] = [];
  const edges: Edge[] = [];
  for (let k = 0; k <= depth; k++) {
    const level = Array.from({ length: width }, (_, j) => `${prefix}-l${k}-${j}`);
    levels.push(level);
    if (k === 0) continue;
    const previous = levels[k - 1]!;
    for (const [j, child] of level.entries()) {
      const inputs = new Set([previous[j]!]);
      const extra = Math.floor(random() * 3);
      for (let x = 0; x < extra; x++) inputs.add(previous[Math.floor(random() * width)]!);
      for (const input of inputs) edges.push({ input, child });
    }
  }
  return { levels, edges };
}

/** Lookups the plain BFS keeps in flight: the same bound as the lineage store's closure. */
export const PLAIN_BFS_CONCURRENCY = 32;

/**
 * Plain breadth-first search in driver code, not Lethe's store: a FIFO work queue of records whose children are
 * still to be read, drained by single-key equality lookups (`{input, tenant}`, the index the closure reads by)
 * with up to `concurrency` in flight at any moment. No level barrier: a lookup starts as soon as one slot is free
 * and a record is queued, so it is never worse than a level-by-level walk at the same bound.
 */
export async function plainClosure(
  lineage: Collection<LineageEdgeDoc>,
  tenant: string,
  roots: readonly string[],
  concurrency = PLAIN_BFS_CONCURRENCY,
): Promise<{ derived: string[]; lookups: number; maxInFlight: number }> {
  const seen = new Set(roots);
  const queue = [...seen];
  const derived: string[] = [];
  let next = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let lookups = 0;
  return new Promise((resolve, reject) => {
    let failed = false;
    const pump = (): void => {
      if (failed) return;
      while (inFlight < concurrency && next < queue.length) {
        const input = queue[next++]!;
        inFlight++;
        lookups++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        lineage
          .find({ input, tenant }, { projection: { _id: 0, child: 1 } })
          .toArray()
          .then((docs) => {
            inFlight--;
            for (const { child } of docs) {
              if (seen.has(child)) continue;
              seen.add(child);
              derived.push(child);
              queue.push(child);
            }
            pump();
          })
          .catch((error: unknown) => {
            failed = true;
            reject(error instanceof Error ? error : new Error(String(error)));
          });
      }
      if (inFlight === 0 && next >= queue.length) resolve({ derived, lookups, maxInFlight });
    };
    pump();
  });
}
