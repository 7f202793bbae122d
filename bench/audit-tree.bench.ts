/**
 * The audit log's Merkle tree against the chain alone, on the configured MongoDB (FerretDB locally), as the second
 * half of `npm run bench:audit`. In one run, side by side:
 * - append rate: the chain alone, and the chain with its tree kept up and a checkpoint signed after each batch;
 * - inclusion and consistency proofs at 10³, 10⁵ and 10⁶ entries (`BENCH_TREE_SIZES`): their size, the time to serve
 *   one from the store (its O(log n) reads) and to verify it offline;
 * - the cost of signing a checkpoint.
 * The big trees are written straight as the tree store keeps them (their leaves are synthetic: a proof's cost
 * depends on the tree's size only). Everything runs in a database of its own, dropped at the end.
 */
import { generateKeyPairSync } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { loadConfig } from '../src/config/load-config.js';
import { createMongoAuditLog } from '../src/governance/audit/mongo-audit-log.js';
import { createCheckpointStore } from '../src/governance/audit/log-tree/checkpoint-store.js';
import { formatCheckpoint } from '../src/governance/audit/log-tree/checkpoint.js';
import { createMongoLogTree, type LogTreeDoc } from '../src/governance/audit/log-tree/log-tree-store.js';
import { appendHashes, leafHash, treeHash, type Hash } from '../src/governance/audit/log-tree/merkle-tree.js';
import { verifyConsistency, verifyInclusion } from '../src/governance/audit/log-tree/merkle-verify.js';
import { noteSigner, signNote } from '../src/governance/audit/log-tree/signed-note.js';
import { createSigner } from '../src/governance/certificates/signing.js';
import { Collections } from '../src/substrate/mongo/collections.js';
import { chainLinkId } from '../src/substrate/mongo/hash-chain.js';
import { runBench } from './lib/bench-run.js';
import { benchAuditInput, timed } from './lib/audit-workload.js';

const N = Number(process.env.BENCH_ENTRIES ?? 3000);
const SIZES = (process.env.BENCH_TREE_SIZES ?? '1000,100000,1000000').split(',').map(Number);
const PROOFS = 200;
const signer = createSigner(generateKeyPairSync('ed25519').privateKey);

const input = benchAuditInput;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function appendRates(db: Db): Promise<void> {
  const log = createMongoAuditLog(db);
  const batches = Math.floor(N / 100);
  const chainOnly = await timed(async () => {
    for (let b = 0; b < batches; b++)
      await log.appendMany(Array.from({ length: 100 }, (_, i) => input('chain', b * 100 + i)));
  });
  const store = createCheckpointStore(db, { audit: log, tree: createMongoLogTree(db), signer, origin: 'bench/audit' });
  const withTree = await timed(async () => {
    for (let b = 0; b < batches; b++) {
      await log.appendMany(Array.from({ length: 100 }, (_, i) => input('tree', b * 100 + i)));
      await store.publish('tree');
    }
  });
  const rate = (ms: number) => Math.round((batches * 100 * 1000) / ms);
  console.log(`\nappend rate, entries/s (${batches * 100} entries, batches of 100, 1 appender)`);
  console.log(`${'chain alone'.padEnd(58)} ${String(rate(chainOnly)).padStart(7)}`);
  console.log(
    `${'chain + tree + a signed checkpoint after each batch'.padEnd(58)} ${String(rate(withTree)).padStart(7)}`,
  );
  console.log(`${'ratio (with tree ÷ chain alone)'.padEnd(58)} ${(chainOnly / withTree).toFixed(2).padStart(7)}`);
}

/** Writes a tree of `size` synthetic leaves as the store keeps it, in batches. */
async function writeTree(db: Db, tenant: string, size: number): Promise<Hash> {
  const trees = db.collection<LogTreeDoc>(Collections.auditTree);
  const stored = new Map<string, Hash>();
  const get = (level: number, index: number) => stored.get(`${level}:${index}`)!;
  let batch: LogTreeDoc[] = [];
  for (let n = 0; n < size; n++) {
    const hashes = appendHashes(n, leafHash(Buffer.from(`entry ${n}`)), get);
    for (const h of hashes) stored.set(`${h.level}:${h.index}`, h.hash);
    batch.push({
      _id: chainLinkId(tenant, n + 1),
      tenant,
      n,
      hashes: hashes.map((h) => Buffer.from(h.hash).toString('base64')),
    });
    if (batch.length === 1000 || n === size - 1) {
      await trees.insertMany(batch, { ordered: true });
      batch = [];
    }
  }
  return treeHash(size, get);
}

async function proofCosts(db: Db): Promise<void> {
  console.log(`\nproofs, ${PROOFS} random ones per size: bytes, ms to serve from the store (p50 / p95), µs to verify`);
  console.log(
    `${'entries'.padStart(9)} ${'write tree s'.padStart(12)} ${'incl. B'.padStart(8)} ${'incl. ms'.padStart(12)} ${'verify µs'.padStart(10)} ${'cons. B'.padStart(8)} ${'cons. ms'.padStart(12)} ${'verify µs'.padStart(10)}`,
  );
  const tree = createMongoLogTree(db);
  for (const size of SIZES) {
    const tenant = `size-${size}`;
    const started = performance.now();
    const root = await writeTree(db, tenant, size);
    const writeS = (performance.now() - started) / 1000;
    const inc: number[] = [];
    const con: number[] = [];
    let incBytes = 0;
    let conBytes = 0;
    let incVerify = 0;
    let conVerify = 0;
    for (let i = 0; i < PROOFS; i++) {
      const index = Math.floor(Math.random() * size);
      let proof: Hash[] = [];
      inc.push(await timed(async () => (proof = await tree.inclusion(tenant, index, size))));
      incBytes = Math.max(incBytes, proof.length * 32);
      const t0 = performance.now();
      if (!verifyInclusion(leafHash(Buffer.from(`entry ${index}`)), index, size, proof, root))
        throw new Error('bad proof');
      incVerify += performance.now() - t0;
      const from = 1 + Math.floor(Math.random() * size);
      const fromRoot = await tree.root(tenant, from);
      con.push(await timed(async () => (proof = await tree.consistency(tenant, from, size))));
      conBytes = Math.max(conBytes, proof.length * 32);
      const t1 = performance.now();
      if (!verifyConsistency(from, size, proof, fromRoot, root)) throw new Error('bad consistency proof');
      conVerify += performance.now() - t1;
    }
    inc.sort((a, b) => a - b);
    con.sort((a, b) => a - b);
    const ms = (xs: number[]) => `${quantile(xs, 0.5).toFixed(2)} / ${quantile(xs, 0.95).toFixed(2)}`;
    console.log(
      `${String(size).padStart(9)} ${writeS.toFixed(1).padStart(12)} ${String(incBytes).padStart(8)} ${ms(inc).padStart(12)} ${((incVerify * 1000) / PROOFS).toFixed(0).padStart(10)} ${String(conBytes).padStart(8)} ${ms(con).padStart(12)} ${((conVerify * 1000) / PROOFS).toFixed(0).padStart(10)}`,
    );
  }
}

function signingCost(): void {
  const note = noteSigner('bench/audit/t', signer);
  const text = formatCheckpoint({ origin: 'bench/audit/t', size: 123456, root: new Uint8Array(32) });
  const runs = 2000;
  const started = performance.now();
  for (let i = 0; i < runs; i++) signNote(text, [note]);
  console.log(
    `\nsigning a checkpoint note (Ed25519): ${(((performance.now() - started) * 1000) / runs).toFixed(0)} µs`,
  );
}

async function main(): Promise<void> {
  const config = loadConfig();
  const client = new MongoClient(config.mongo.uri, { maxPoolSize: 32 });
  const db = client.db(`${config.mongo.dbName}_bench_audit_tree`);
  try {
    await db.dropDatabase();
    await createMongoAuditLog(db).ensureIndexes();
    console.log(`audit tree bench against ${config.mongo.uri.replace(/\/\/[^@]*@/, '//')}`);
    await appendRates(db);
    signingCost();
    await proofCosts(db);
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
}

await runBench(main);
