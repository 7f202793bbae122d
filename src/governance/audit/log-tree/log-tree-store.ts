/**
 * Each tenant's audit log as a Merkle tree in MongoDB (`merkle-tree.ts` computes; this keeps). Leaf n is the audit
 * entry of seq n+1, hashed as RFC 6962 leaf of the entry's 32-byte chain hash. One document per leaf holds every hash
 * its append stores (the leaf, then each subtree it completes), written in one insert: a leaf is never stored
 * without its subtrees, so the tree's size is simply how many leaf documents stand, found by `_id` probes as the
 * chain's head is.
 *
 * Several processes may extend a tenant's tree at once. The hashes of leaf n follow from the chain alone, so every
 * writer computes the same document: a duplicate key means another got there first, and the stored document is
 * compared, never trusted blindly. A different one is a fork of the log and fails loudly.
 */
import type { Collection, Db } from 'mongodb';
import { Collections, duplicateKeysOnly, findOwn, mapBounded } from '../../../substrate/mongo/collections.js';
import { findByIds } from '../../../substrate/mongo/bounded-scan.js';
import { chainLinkId, findChainHead } from '../../../substrate/mongo/hash-chain.js';
import { BoundedMap } from '../../../shared/bounded-map.js';
import { DomainError, ErrorType } from '../../../shared/errors.js';
import type { AuditEntry } from '../audit-log.port.js';
import {
  appendHashes,
  consistencyProof,
  hashesNeeded,
  inclusionProof,
  treeHash,
  type Hash,
  type HashGetter,
} from './merkle-tree.js';
import { auditLeaf } from './log-anchor.js';

export { auditLeaf };

export interface LogTreeDoc {
  /** `<tenant>:<n + 1, zero-padded>`: the seq of the entry the leaf stands for, as the chain's own ids. */
  _id: string;
  tenant: string;
  /** The leaf's index (the entry's seq − 1). */
  n: number;
  /** Base64: the leaf hash, then the hash of each subtree this leaf completes, bottom up. */
  hashes: string[];
}

export interface LogTree {
  /** How many entries the tenant's tree holds (always a prefix of its chain). */
  size(tenant: string): Promise<number>;
  /** Adds the chain's entries after the tree's size, in order; returns the new size. */
  extend(tenant: string, entries: AsyncIterable<Pick<AuditEntry, 'seq' | 'hash'>>): Promise<number>;
  root(tenant: string, size: number): Promise<Hash>;
  /** The leaf hash of the entry of seq index+1, or null while the tree has not reached it. */
  leaf(tenant: string, index: number): Promise<Hash | null>;
  /** The inclusion proof of leaf `index` (the entry of seq index+1) in the tree of `size` entries. */
  inclusion(tenant: string, index: number, size: number): Promise<Hash[]>;
  consistency(tenant: string, from: number, to: number): Promise<Hash[]>;
  /** The hashes of the complete subtrees at `level`, indexes [start, start + count) (a tile's worth, say). */
  hashesAt(tenant: string, level: number, start: number, count: number): Promise<Hash[]>;
}

const INSERT_BATCH = 256;
const READ_CONCURRENCY = 16;
const TENANT_CACHE = 10_000;
/** Leaf documents kept for proofs, across tenants: about 150 bytes each. */
const PROOF_CACHE = 50_000;

export function createMongoLogTree(db: Db): LogTree {
  const trees: Collection<LogTreeDoc> = db.collection<LogTreeDoc>(Collections.auditTree);
  /** A lower bound of each tenant's size (leaves are never removed). */
  const known = new BoundedMap<string, number>(TENANT_CACHE);

  const leafDoc = (tenant: string, n: number) => findOwn(trees, tenant, chainLinkId(tenant, n + 1));
  /**
   * Leaves read for proofs. A stored leaf never changes (a different one is refused as a fork), so what was read
   * once serves every later proof: the upper subtrees, which every proof of a tree needs, stay in memory.
   */
  const proofReads = new BoundedMap<string, LogTreeDoc>(PROOF_CACHE);
  const cachedLeaf = async (tenant: string, n: number): Promise<LogTreeDoc | null> => {
    const id = chainLinkId(tenant, n + 1);
    const kept = proofReads.get(id);
    if (kept) return kept;
    const doc = await leafDoc(tenant, n);
    if (doc) proofReads.set(id, doc);
    return doc;
  };

  const size = async (tenant: string): Promise<number> => {
    const from = known.get(tenant) ?? 0;
    const start = from > 0 ? await leafDoc(tenant, from - 1) : null;
    const head = await findChainHead(
      async (seq) => ((await leafDoc(tenant, seq - 1)) ? { seq } : null),
      start ? { seq: from } : null,
    );
    const found = head?.seq ?? 0;
    known.set(tenant, found);
    return found;
  };

  /** The stored hashes `compute` needs, fetched in one bounded round, then `compute` over them. */
  const over = async <T>(tenant: string, needed: number, compute: (get: HashGetter) => T): Promise<T> => {
    // The size only grows: a size known to cover the request needs no probe.
    const knownSize = known.get(tenant) ?? 0;
    const have = knownSize >= needed ? knownSize : await size(tenant);
    if (needed > have)
      throw new DomainError(ErrorType.NotFound, `size: the log's tree holds ${have} entries, not ${needed}`, 'size');
    const wanted = hashesNeeded(compute);
    const leaves = [...new Set(wanted.map((t) => (t.index + 1) * 2 ** t.level - 1))];
    const docs = new Map<number, LogTreeDoc>();
    for (const doc of await mapBounded(leaves, READ_CONCURRENCY, (n) => cachedLeaf(tenant, n)))
      if (doc) docs.set(doc.n, doc);
    return compute((level, index) => {
      const hash = docs.get((index + 1) * 2 ** level - 1)?.hashes[level];
      if (hash === undefined) throw new Error(`log tree of ${tenant}: hash ${level}/${index} is missing`);
      return new Uint8Array(Buffer.from(hash, 'base64'));
    });
  };

  return {
    size,

    async extend(tenant, entries) {
      let next = await size(tenant);
      // Left siblings still to be read: a subtree at an even index is read once, when its right neighbour completes.
      const frontier = new Map<string, Hash>();
      const get: HashGetter = (level, index) => {
        const key = `${level}:${index}`;
        const hash = frontier.get(key);
        if (!hash) throw new Error(`log tree of ${tenant}: sibling ${key} not fetched`);
        frontier.delete(key);
        return hash;
      };
      let batch: LogTreeDoc[] = [];
      const flush = async () => {
        await insertAgreeing(trees, batch);
        known.set(tenant, Math.max(known.get(tenant) ?? 0, next));
        batch = [];
      };
      for await (const entry of entries) {
        if (entry.seq - 1 < next) continue;
        if (entry.seq - 1 > next)
          throw new DomainError(ErrorType.Conflict, `audit chain of ${tenant}: seq ${next + 1} is missing`);
        await fetchSiblings(tenant, next, frontier, leafDoc);
        const stored = appendHashes(next, auditLeaf(entry), get);
        for (const s of stored) if (s.index % 2 === 0) frontier.set(`${s.level}:${s.index}`, s.hash);
        batch.push({
          _id: chainLinkId(tenant, next + 1),
          tenant,
          n: next,
          hashes: stored.map((s) => Buffer.from(s.hash).toString('base64')),
        });
        next++;
        if (batch.length >= INSERT_BATCH) await flush();
      }
      if (batch.length > 0) await flush();
      return next;
    },

    async leaf(tenant, index) {
      const doc = await leafDoc(tenant, index);
      return doc ? new Uint8Array(Buffer.from(doc.hashes[0]!, 'base64')) : null;
    },
    root: (tenant, treeSize) => over(tenant, treeSize, (get) => treeHash(treeSize, get)),
    inclusion: (tenant, index, treeSize) => over(tenant, treeSize, (get) => inclusionProof(index, treeSize, get)),
    consistency: (tenant, from, to) => over(tenant, to, (get) => consistencyProof(from, to, get)),

    async hashesAt(tenant, level, start, count) {
      const needed = (start + count) * 2 ** level;
      const have = (known.get(tenant) ?? 0) >= needed ? needed : await size(tenant);
      if (needed > have)
        throw new DomainError(ErrorType.NotFound, `the log's tree holds ${have} entries, not ${needed}`, 'size');
      // Subtree (level, k) is stored with the leaf that completed it, the last of its 2^level leaves.
      const leafOf = (k: number) => (k + 1) * 2 ** level - 1;
      const ids = Array.from({ length: count }, (_, i) => chainLinkId(tenant, leafOf(start + i) + 1));
      // `_id` lookups, not a scan of the tenant's tree: a tile is 256 of its documents, however large the tree.
      const docs = new Map((await findByIds(trees, tenant, ids, { scan: false })).map((d) => [d.n, d]));
      return Array.from({ length: count }, (_, i) => {
        const hash = docs.get(leafOf(start + i))?.hashes[level];
        if (hash === undefined) throw new Error(`log tree of ${tenant}: hash ${level}/${start + i} is missing`);
        return new Uint8Array(Buffer.from(hash, 'base64'));
      });
    },
  };
}

/** Reads into the frontier the left siblings leaf `n`'s append needs that this extension did not compute itself. */
async function fetchSiblings(
  tenant: string,
  n: number,
  frontier: Map<string, Hash>,
  leafDoc: (tenant: string, n: number) => Promise<LogTreeDoc | null>,
): Promise<void> {
  for (let level = 0, index = n; index % 2 === 1; level++, index = Math.floor(index / 2)) {
    const key = `${level}:${index - 1}`;
    if (frontier.has(key)) continue;
    const doc = await leafDoc(tenant, index * 2 ** level - 1);
    const hash = doc?.hashes[level];
    if (hash === undefined) throw new Error(`log tree of ${tenant}: subtree ${key} is not stored`);
    frontier.set(key, new Uint8Array(Buffer.from(hash, 'base64')));
  }
}

/**
 * Inserts the documents in leaf order, so that the stored leaves stay a prefix whatever stops the insert (the size
 * is found by probing, which a gap would mislead). A leaf another writer stored first must equal this one, or the log
 * has forked.
 */
async function insertAgreeing(trees: Collection<LogTreeDoc>, docs: LogTreeDoc[]): Promise<void> {
  let rest = docs;
  while (rest.length > 0) {
    try {
      await trees.insertMany(rest, { ordered: true });
      return;
    } catch (error) {
      const at = duplicateKeysOnly(error)?.[0];
      if (at === undefined) throw error;
      const mine = rest[at]!;
      const stored = await findOwn(trees, mine.tenant, mine._id);
      if (!stored || stored.hashes.join() !== mine.hashes.join())
        throw new DomainError(
          ErrorType.Conflict,
          `log tree of ${mine.tenant}: leaf ${mine.n} differs from the stored one`,
        );
      rest = rest.slice(at + 1);
    }
  }
}
