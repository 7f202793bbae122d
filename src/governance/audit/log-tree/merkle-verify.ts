/**
 * What an auditor runs offline: RFC 9162's checks of an inclusion proof (§2.1.3.2) and of a consistency proof
 * (§2.1.4.2). They need only the proof, the sizes and the tree heads: never the log. Each answers true or false, and
 * a malformed proof (wrong length, a hash of the wrong size) is false, never an exception.
 */
import { nodeHash, type Hash } from './merkle-tree.js';

/** True when `proof` shows the leaf hash at `index` in the tree of `size` leaves whose root is `root`. */
export function verifyInclusion(leaf: Hash, index: number, size: number, proof: readonly Hash[], root: Hash): boolean {
  if (!isTreeSize(size) || !Number.isSafeInteger(index) || index < 0 || index >= size) return false;
  if (![leaf, root, ...proof].every(isHash)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(r, root);
}

/** True when `proof` shows that the tree of `to` leaves (root `toRoot`) extends the one of `from` (root `fromRoot`). */
export function verifyConsistency(
  from: number,
  to: number,
  proof: readonly Hash[],
  fromRoot: Hash,
  toRoot: Hash,
): boolean {
  if (!isTreeSize(from) || !isTreeSize(to) || from > to) return false;
  if (![fromRoot, toRoot, ...proof].every(isHash)) return false;
  if (from === to) return proof.length === 0 && equal(fromRoot, toRoot);
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(fr, fromRoot) && equal(sr, toRoot);
}

function isTreeSize(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1;
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(Math.log2(n));
}

function isHash(h: Hash): boolean {
  return h instanceof Uint8Array && h.length === 32;
}

function equal(a: Hash, b: Hash): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
