/**
 * A reference model of lineage closure, written without the store's data layout so that the store can be
 * checked against it: plain breadth-first search over an in-memory edge list, a least-fixpoint definition
 * to check the search itself, and generators of lineage graphs (random small ones for fast-check, large
 * layered ones for the round-trip tests).
 */
import fc from 'fast-check';

/** `child` was derived (at least in part) from `input`. */
export interface LineageEdge {
  input: string;
  child: string;
}

export interface ReferenceClosure {
  /** Everything transitively derived from the roots, roots excluded. */
  derived: Set<string>;
  /** `levels[0]` holds the distinct roots; `levels[k]` the records first reached after k derivation steps. */
  levels: string[][];
  /** Each reached id's level (roots at 0). */
  levelOf: Map<string, number>;
}

export function childrenIndex(edges: readonly LineageEdge[]): Map<string, string[]> {
  const children = new Map<string, string[]>();
  for (const { input, child } of edges) {
    const list = children.get(input);
    if (list) list.push(child);
    else children.set(input, [child]);
  }
  return children;
}

/** Breadth-first search from the roots; the seen-set makes cycles and diamonds harmless. */
export function referenceClosure(edges: readonly LineageEdge[], roots: readonly string[]): ReferenceClosure {
  const children = childrenIndex(edges);
  const levelOf = new Map<string, number>();
  const first = [...new Set(roots)];
  for (const root of first) levelOf.set(root, 0);
  const levels: string[][] = first.length > 0 ? [first] : [];
  const derived = new Set<string>();
  for (let frontier = first; frontier.length > 0;) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const child of children.get(id) ?? []) {
        if (levelOf.has(child)) continue;
        levelOf.set(child, levels.length);
        derived.add(child);
        next.push(child);
      }
    }
    if (next.length > 0) levels.push(next);
    frontier = next;
  }
  return { derived, levels, levelOf };
}

/**
 * The definition the search must meet, stated without a search: the least set that contains the roots and
 * every record with an input in the set — minus the roots.
 */
export function fixpointClosure(edges: readonly LineageEdge[], roots: readonly string[]): Set<string> {
  const reached = new Set(roots);
  for (let grew = true; grew;) {
    grew = false;
    for (const { input, child } of edges) {
      if (reached.has(input) && !reached.has(child)) {
        reached.add(child);
        grew = true;
      }
    }
  }
  for (const root of roots) reached.delete(root);
  return reached;
}

/** A small lineage graph with the roots of one closure question about it. */
export interface LineageGraph {
  nodes: { id: string; subject: number }[];
  edges: LineageEdge[];
  roots: string[];
}

/** Ids that no record has: a root may name a record without derivations, or nothing at all. */
export const GHOST = 'ghost';

interface GraphSeed {
  inputs: number[][];
  subjects: number[];
  extraEdges: [number, number][];
  roots: { kind: 'ids'; picks: number[] } | { kind: 'subject'; subject: number };
  ghostRoot: boolean;
}

function buildGraph(seed: GraphSeed): LineageGraph {
  const n = seed.inputs.length;
  const id = (i: number): string => `n${i}`;
  const nodes = seed.inputs.map((_, i) => ({ id: id(i), subject: seed.subjects[i] ?? 0 }));
  const edges: LineageEdge[] = [];
  // Inputs come from earlier nodes (a DAG with diamonds, multi-parent records and cross-subject merges)...
  for (const [i, raw] of seed.inputs.entries()) {
    if (i === 0) continue;
    for (const input of new Set(raw.map((x) => x % i))) edges.push({ input: id(input), child: id(i) });
  }
  // ...plus a few arbitrary edges, which may close cycles or loop on themselves, and repeat existing edges.
  for (const [a, b] of seed.extraEdges) edges.push({ input: id(a % n), child: id(b % n) });
  const sources = new Set(nodes.map((x) => x.id));
  for (const { child } of edges) sources.delete(child);
  const spec = seed.roots;
  const roots =
    spec.kind === 'ids'
      ? spec.picks.map((p) => id(p % n))
      : // "Erase a subject": every source record (an event, say) of that subject.
        nodes.filter((x) => sources.has(x.id) && x.subject === spec.subject).map((x) => x.id);
  if (seed.ghostRoot) roots.push(GHOST);
  return { nodes, edges, roots };
}

/** Random lineage graphs of up to `maxNodes` records over a few subjects, with a closure question each. */
export function lineageGraphs(maxNodes = 30): fc.Arbitrary<LineageGraph> {
  return fc
    .record({
      inputs: fc.array(fc.array(fc.nat(), { maxLength: 3 }), { minLength: 1, maxLength: maxNodes }),
      subjects: fc.array(fc.nat({ max: 2 }), { maxLength: maxNodes }),
      extraEdges: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 3 }),
      roots: fc.oneof(
        fc.record({ kind: fc.constant('ids' as const), picks: fc.array(fc.nat(), { maxLength: 5 }) }),
        fc.record({ kind: fc.constant('subject' as const), subject: fc.nat({ max: 2 }) }),
      ),
      ghostRoot: fc.boolean(),
    })
    .map(buildGraph);
}

/** A graph with every id prefixed, so that each run or tenant gets ids of its own. */
export function withPrefix(graph: LineageGraph, prefix: string): LineageGraph {
  const p = (id: string): string => `${prefix}-${id}`;
  return {
    nodes: graph.nodes.map((x) => ({ ...x, id: p(x.id) })),
    edges: graph.edges.map((e) => ({ input: p(e.input), child: p(e.child) })),
    roots: graph.roots.map(p),
  };
}

/** Each derived record with all its inputs, as a writer registers it (one call per record). */
export function registrations(edges: readonly LineageEdge[]): Map<string, string[]> {
  const byChild = new Map<string, string[]>();
  for (const { input, child } of edges) {
    const list = byChild.get(child);
    if (list) list.push(input);
    else byChild.set(child, [input]);
  }
  return byChild;
}

/**
 * A layered lineage graph: `width` source records (level 0, spread over `subjects`), then `depth` levels of
 * `width` derived records. Record j of level k derives from record j of level k-1 plus up to `extraInputs`
 * random records of level k-1 — diamonds and cross-subject merges everywhere — so every path from level 0
 * to a level-k record has exactly k steps: the closure of level 0 has depth `depth`.
 */
export function layeredGraph(options: {
  prefix: string;
  depth: number;
  width: number;
  subjects?: number;
  extraInputs?: number;
  seed?: number;
}): { levels: string[][]; edges: LineageEdge[]; subjectOf: Map<string, number> } {
  const { prefix, depth, width, subjects = 50, extraInputs = 2 } = options;
  const random = mulberry32(options.seed ?? 1);
  const levels: string[][] = [];
  const edges: LineageEdge[] = [];
  const subjectOf = new Map<string, number>();
  for (let k = 0; k <= depth; k++) {
    const level = Array.from({ length: width }, (_, j) => `${prefix}-l${k}-${j}`);
    levels.push(level);
    for (const [j, id] of level.entries()) {
      if (k === 0) {
        subjectOf.set(id, j % subjects);
        continue;
      }
      const previous = levels[k - 1]!;
      const first = previous[j]!;
      subjectOf.set(id, subjectOf.get(first)!);
      const inputs = new Set([first]);
      const extra = Math.floor(random() * (extraInputs + 1));
      for (let x = 0; x < extra; x++) inputs.add(previous[Math.floor(random() * width)]!);
      for (const input of inputs) edges.push({ input, child: id });
    }
  }
  return { levels, edges, subjectOf };
}

/** A small deterministic PRNG, so that generated graphs are the same on every run. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
