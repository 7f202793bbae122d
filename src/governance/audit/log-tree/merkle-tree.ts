/**
 * The Merkle tree over a tenant's audit log, as RFC 6962 / RFC 9162 define it: a leaf hashes as SHA-256(0x00 ‖ entry),
 * an inner node as SHA-256(0x01 ‖ left ‖ right), and a tree of n leaves splits at the largest power of two below n.
 *
 * What is stored is every complete subtree's hash, addressed by its level and index: leaf i is (0, i), and (L, i)
 * covers leaves [i·2^L, (i+1)·2^L). An append stores its leaf and the subtrees it completes (one more per trailing
 * one bit of its index: amortised two hashes, never more than log n + 1), and reads as many left siblings. A tree
 * head, an inclusion proof or a consistency proof of any size then needs O(log n) stored hashes: the tree is never
 * recomputed.
 *
 * Functions here are pure. Those that read the tree take `get(level, index)`, which answers from hashes fetched
 * beforehand: `hashesNeeded` names them, by running the same computation over placeholders (which hashes a proof
 * needs depends on the sizes only, never on the hashes).
 */
import { sha256Bytes } from '../../../shared/sha256.js';

export type Hash = Uint8Array;

/** A stored hash's address: the subtree of 2^level leaves starting at leaf index·2^level. */
export interface TreeIndex {
  level: number;
  index: number;
}

/** Answers a stored hash; fetched beforehand (see `hashesNeeded`). */
export type HashGetter = (level: number, index: number) => Hash;

const LEAF_PREFIX = Uint8Array.of(0);
const NODE_PREFIX = Uint8Array.of(1);

export function leafHash(entry: Uint8Array): Hash {
  return sha256Bytes(concat(LEAF_PREFIX, entry));
}

export function nodeHash(left: Hash, right: Hash): Hash {
  return sha256Bytes(concat(NODE_PREFIX, left, right));
}

/** The root of the empty tree: SHA-256 of nothing (RFC 6962 §2.1). */
export function emptyTreeHash(): Hash {
  return sha256Bytes(new Uint8Array(0));
}

/** Stored hashes the append of leaf `n` (0-based) reads: the left siblings of the subtrees it completes. */
export function appendReads(n: number): TreeIndex[] {
  const reads: TreeIndex[] = [];
  for (let level = 0, index = n; index % 2 === 1; level++, index = Math.floor(index / 2)) {
    reads.push({ level, index: index - 1 });
  }
  return reads;
}

/** What appending leaf `n` stores: its leaf hash, then each subtree it completes, bottom up. */
export function appendHashes(n: number, leaf: Hash, get: HashGetter): (TreeIndex & { hash: Hash })[] {
  const stored = [{ level: 0, index: n, hash: leaf }];
  let hash = leaf;
  for (const sibling of appendReads(n)) {
    hash = nodeHash(get(sibling.level, sibling.index), hash);
    stored.push({ level: sibling.level + 1, index: Math.floor(sibling.index / 2), hash });
  }
  return stored;
}

/** MTH(D[lo:hi]): from one stored hash when the range is a complete subtree, else split as RFC 6962 does. */
export function subtreeHash(lo: number, hi: number, get: HashGetter): Hash {
  const width = hi - lo;
  if (width <= 0) throw new RangeError(`subtree [${lo}, ${hi}) is empty`);
  const level = Math.log2(width);
  if (Number.isInteger(level) && lo % width === 0) return get(level, lo / width);
  const k = largestPowerOfTwoBelow(width);
  return nodeHash(subtreeHash(lo, lo + k, get), subtreeHash(lo + k, hi, get));
}

/** The root of the tree of the first `size` leaves. */
export function treeHash(size: number, get: HashGetter): Hash {
  return size === 0 ? emptyTreeHash() : subtreeHash(0, size, get);
}

/** RFC 6962's PATH(m, D[n]): the audit path of leaf `index` in the tree of `size` leaves, from the leaf up. */
export function inclusionProof(index: number, size: number, get: HashGetter): Hash[] {
  checkSize(size, 'size');
  if (!Number.isSafeInteger(index) || index < 0 || index >= size)
    throw new RangeError(`index: ${index} is not a leaf of a tree of ${size}`);
  return path(index, 0, size, get);
}

function path(m: number, lo: number, hi: number, get: HashGetter): Hash[] {
  if (hi - lo <= 1) return [];
  const k = largestPowerOfTwoBelow(hi - lo);
  return m < k
    ? [...path(m, lo, lo + k, get), subtreeHash(lo + k, hi, get)]
    : [...path(m - k, lo + k, hi, get), subtreeHash(lo, lo + k, get)];
}

/** RFC 6962's PROOF(m, D[n]): that the tree of `to` leaves extends the tree of `from` leaves. */
export function consistencyProof(from: number, to: number, get: HashGetter): Hash[] {
  checkSize(to, 'to');
  if (!Number.isSafeInteger(from) || from < 1 || from > to)
    throw new RangeError(`from: ${from} is not a size between 1 and ${to}`);
  return subproof(from, 0, to, true, get);
}

function subproof(m: number, lo: number, hi: number, whole: boolean, get: HashGetter): Hash[] {
  const n = hi - lo;
  if (m === n) return whole ? [] : [subtreeHash(lo, hi, get)];
  const k = largestPowerOfTwoBelow(n);
  return m <= k
    ? [...subproof(m, lo, lo + k, whole, get), subtreeHash(lo + k, hi, get)]
    : [...subproof(m - k, lo + k, hi, false, get), subtreeHash(lo, lo + k, get)];
}

/** The stored hashes `compute` reads, found by running it over placeholders. */
export function hashesNeeded(compute: (get: HashGetter) => unknown): TreeIndex[] {
  const seen = new Map<string, TreeIndex>();
  const placeholder = new Uint8Array(32);
  compute((level, index) => {
    seen.set(`${level}:${index}`, { level, index });
    return placeholder;
  });
  return [...seen.values()];
}

/** The largest power of two strictly below n (n ≥ 2). */
export function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function checkSize(size: number, name: string): void {
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`${name}: ${size} is not a tree size`);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
