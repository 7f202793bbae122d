/** A generated lineage graph for the closure comparison, and the naive closure it is compared with. */
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

/**
 * Breadth-first search with one sequential query per record — the children of one input at a time — the
 * way a closure reads when nothing is batched: as many round trips as records in the closure.
 */
export async function naiveClosure(
  lineage: Collection<LineageEdgeDoc>,
  tenant: string,
  roots: readonly string[],
): Promise<{ derived: string[]; roundTrips: number }> {
  const seen = new Set(roots);
  const queue = [...seen];
  const derived: string[] = [];
  let roundTrips = 0;
  for (let i = 0; i < queue.length; i++) {
    roundTrips++;
    const docs = await lineage.find({ input: queue[i]!, tenant }, { projection: { _id: 0, child: 1 } }).toArray();
    for (const { child } of docs) {
      if (seen.has(child)) continue;
      seen.add(child);
      derived.push(child);
      queue.push(child);
    }
  }
  return { derived, roundTrips };
}
