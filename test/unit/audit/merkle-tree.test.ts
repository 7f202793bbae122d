/**
 * The audit log's Merkle tree against RFC 6962 written out naively (every root recomputed from all leaves): the
 * incremental store gives the same roots, its proofs verify, and a proof for another leaf, another size or a
 * rewritten entry never does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendHashes,
  appendReads,
  consistencyProof,
  hashesNeeded,
  inclusionProof,
  leafHash,
  treeHash,
  type Hash,
  type HashGetter,
} from '../../../src/governance/audit/log-tree/merkle-tree.js';
import { verifyConsistency, verifyInclusion } from '../../../src/governance/audit/log-tree/merkle-verify.js';
import { naiveRoot } from '../../support/audit-entries.js';

const entry = (i: number) => new TextEncoder().encode(`entry ${i}`);

/** A log of `n` entries kept as the store keeps it: only what each append stores, read only where it reads. */
function grow(n: number): { get: HashGetter; leaves: Hash[]; reads: number[] } {
  const stored = new Map<string, Hash>();
  const get: HashGetter = (level, index) => {
    const h = stored.get(`${level}:${index}`);
    if (!h) throw new Error(`hash ${level}:${index} is not stored`);
    return h;
  };
  const leaves: Hash[] = [];
  const reads: number[] = [];
  for (let i = 0; i < n; i++) {
    const leaf = leafHash(entry(i));
    leaves.push(leaf);
    reads.push(appendReads(i).length);
    for (const s of appendHashes(i, leaf, get)) stored.set(`${s.level}:${s.index}`, s.hash);
  }
  return { get, leaves, reads };
}

const hex = (h: Hash) => Buffer.from(h).toString('hex');

describe('the incremental Merkle tree', () => {
  const N = 70;
  const log = grow(N);

  it('gives every tree size the root RFC 6962 computes from all its leaves', () => {
    for (let size = 0; size <= N; size++) {
      expect(hex(treeHash(size, log.get)), `size ${size}`).toBe(hex(naiveRoot(log.leaves.slice(0, size))));
    }
  });

  it('reads at most log2(n) stored hashes per append, one on average (and stores one more)', () => {
    const big = grow(4096);
    expect(Math.max(...big.reads)).toBeLessThanOrEqual(12);
    expect(big.reads.reduce((a, b) => a + b, 0) / big.reads.length).toBeLessThan(1.01);
  });

  it('proves each leaf of each size, and each proof verifies against that root only', () => {
    for (let size = 1; size <= N; size++) {
      const root = treeHash(size, log.get);
      for (let index = 0; index < size; index++) {
        const proof = inclusionProof(index, size, log.get);
        expect(verifyInclusion(log.leaves[index]!, index, size, proof, root), `${index} in ${size}`).toBe(true);
        // Another leaf at this place, or this leaf claimed at another place, does not verify.
        expect(verifyInclusion(log.leaves[(index + 1) % N]!, index, size, proof, root)).toBe(false);
        if (size > 1) expect(verifyInclusion(log.leaves[index]!, (index + 1) % size, size, proof, root)).toBe(false);
      }
    }
  });

  it('proves each size consistent with each later one, and no proof joins a rewritten log', () => {
    const forked = grow(N);
    const rewritten = leafHash(new TextEncoder().encode('rewritten entry 3'));
    const forkGet: HashGetter = (level, index) =>
      level === 0 && index === 3 ? rewritten : subtreeOverLeaves(forked.leaves, 3, rewritten, level, index);
    for (let from = 1; from <= N; from++) {
      for (let to = from; to <= N; to++) {
        const proof = consistencyProof(from, to, log.get);
        const fromRoot = treeHash(from, log.get);
        const toRoot = treeHash(to, log.get);
        expect(verifyConsistency(from, to, proof, fromRoot, toRoot), `${from} → ${to}`).toBe(true);
        // The later tree of a log whose entry 3 was rewritten: consistent with no earlier tree that holds entry 3.
        if (from > 3 && to > from) {
          const forkRoot = treeHash(to, forkGet);
          expect(verifyConsistency(from, to, consistencyProof(from, to, forkGet), fromRoot, forkRoot)).toBe(false);
          expect(verifyConsistency(from, to, proof, fromRoot, forkRoot)).toBe(false);
        }
      }
    }
  });

  it('answers false to random proofs, hashes of any length among them, and never throws', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: N }),
        fc.integer({ min: 1, max: N }),
        fc.nat(),
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 40 }), { maxLength: 10 }),
        (a, b, at, junk) => {
          const [from, to] = a <= b ? [a, b] : [b, a];
          const index = at % to;
          const root = treeHash(to, log.get);
          // A tree of one leaf is its leaf: the empty proof is the right one there, and only there.
          expect(verifyInclusion(log.leaves[index]!, index, to, junk, root)).toBe(to === 1 && junk.length === 0);
          expect(verifyConsistency(from, to, junk, treeHash(from, log.get), root)).toBe(
            from === to && junk.length === 0,
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('names exactly the stored hashes a proof reads, so they can be fetched in one round', () => {
    const needed = hashesNeeded((get) => inclusionProof(5, 67, get));
    const answered = new Map(needed.map((t) => [`${t.level}:${t.index}`, log.get(t.level, t.index)]));
    const proof = inclusionProof(5, 67, (level, index) => answered.get(`${level}:${index}`)!);
    expect(proof.map(hex)).toEqual(inclusionProof(5, 67, log.get).map(hex));
    expect(needed.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(67)));
  });
});

/** A stored hash of the log whose leaf `at` was replaced: recomputed over the leaves (the fork's own store). */
function subtreeOverLeaves(leaves: readonly Hash[], at: number, leaf: Hash, level: number, index: number): Hash {
  const width = 2 ** level;
  const span = leaves.slice(index * width, (index + 1) * width).map((h, i) => (index * width + i === at ? leaf : h));
  return naiveRoot(span);
}
