import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fixpointClosure,
  layeredGraph,
  lineageGraphs,
  referenceClosure,
  registrations,
  type LineageEdge,
} from './closure-model.js';

const edges = (...pairs: [string, string][]): LineageEdge[] => pairs.map(([input, child]) => ({ input, child }));

describe('reference closure (the model the store is checked against)', () => {
  it('reaches both sides of a diamond once, at the level of its shortest path', () => {
    const closure = referenceClosure(edges(['a', 'b'], ['a', 'c'], ['b', 'd'], ['c', 'd'], ['d', 'e']), ['a']);
    expect([...closure.derived].sort()).toEqual(['b', 'c', 'd', 'e']);
    expect(closure.levels).toEqual([['a'], ['b', 'c'], ['d'], ['e']]);
  });

  it('stops on a cycle and never reports a root as derived', () => {
    const closure = referenceClosure(edges(['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'c']), ['a']);
    expect([...closure.derived].sort()).toEqual(['b', 'c']);
    expect(closure.levels).toHaveLength(3);
  });

  it('follows a merge of two subjects into records derived from the other subject as well', () => {
    // e1 (subject 1) and e2 (subject 2) both feed m; m feeds s; e2 alone feeds x.
    const graph = edges(['e1', 'm'], ['e2', 'm'], ['m', 's'], ['e2', 'x']);
    expect([...referenceClosure(graph, ['e1']).derived].sort()).toEqual(['m', 's']);
    expect([...referenceClosure(graph, ['e2']).derived].sort()).toEqual(['m', 's', 'x']);
  });

  it('has no levels for no roots, and one level for roots without derivations', () => {
    expect(referenceClosure(edges(['a', 'b']), [])).toMatchObject({ derived: new Set(), levels: [] });
    expect(referenceClosure(edges(['a', 'b']), ['z', 'z'])).toMatchObject({ derived: new Set(), levels: [['z']] });
  });

  it('equals the least-fixpoint definition on random graphs with diamonds, merges and cycles', () => {
    fc.assert(
      fc.property(lineageGraphs(40), ({ edges: graph, roots }) => {
        expect(referenceClosure(graph, roots).derived).toEqual(fixpointClosure(graph, roots));
      }),
      { numRuns: 500 },
    );
  });

  it('is closed, excludes the roots, and reaches every level-k record from one at level k-1', () => {
    fc.assert(
      fc.property(lineageGraphs(40), ({ edges: graph, roots }) => {
        const { derived, levels, levelOf } = referenceClosure(graph, roots);
        const reached = new Set([...roots, ...derived]);
        for (const { input, child } of graph) if (reached.has(input)) expect(reached.has(child)).toBe(true);
        for (const root of roots) expect(derived.has(root)).toBe(false);
        expect(levels.flat()).toHaveLength(new Set(levels.flat()).size);
        expect(levels.flat().length).toBe(new Set(roots).size + derived.size);
        const inputsOf = registrations(graph);
        for (const [k, level] of levels.entries()) {
          if (k === 0) continue;
          for (const id of level) expect(inputsOf.get(id)!.some((input) => levelOf.get(input) === k - 1)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('layered lineage graphs', () => {
  it('have a closure of depth exactly `depth` from their source records, level by level', () => {
    const { levels, edges: graph } = layeredGraph({ prefix: 'g', depth: 6, width: 300, seed: 7 });
    const closure = referenceClosure(graph, levels[0]!);
    expect(closure.levels.map((l) => [...l].sort())).toEqual(levels.map((l) => [...l].sort()));
    expect(closure.derived.size).toBe(6 * 300);
  });

  it('merge subjects: the closure of one subject reaches records of others', () => {
    const { levels, edges: graph, subjectOf } = layeredGraph({ prefix: 'g', depth: 5, width: 200, subjects: 20 });
    const roots = levels[0]!.filter((id) => subjectOf.get(id) === 0);
    const { derived, levels: reached } = referenceClosure(graph, roots);
    expect(reached).toHaveLength(6);
    expect([...derived].some((id) => subjectOf.get(id) !== 0)).toBe(true);
  });

  it('are the same for the same seed', () => {
    const a = layeredGraph({ prefix: 'g', depth: 3, width: 50, seed: 3 });
    const b = layeredGraph({ prefix: 'g', depth: 3, width: 50, seed: 3 });
    expect(a.edges).toEqual(b.edges);
  });
});
