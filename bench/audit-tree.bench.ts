/**
 * The audit log's Merkle tree against the chain alone, on the configured MongoDB (FerretDB locally), as the second
 * half of `npm run bench:audit`. In one run, side by side:
 * - append rate: the chain alone, and the chain with its tree kept up and a checkpoint signed after each batch;
 * - inclusion and consistency proofs at 10³, 10⁵ and 10⁶ entries (`BENCH_TREE_SIZES`): their size, the time to serve
 *   one from the store (its O(log n) reads) and to verify it offline;
 * - the cost of signing a checkpoint;
 * - reading a hash tile (C2SP tlog-tiles: 256 hashes of level 0, and the level-1 tile over the whole tree).
 * The big trees are written straight as the tree store keeps them (their leaves are synthetic: a proof's cost
 * depends on the tree's size only). Everything runs in a database of its own, dropped at the end.
 */
import { generateKeyPairSync } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { loadConfig } from '../src/config/load-config.js';
import { createMongoAuditLog } from '../src/governance/audit/mongo-audit-log.js';
import { createCheckpointStore } from '../src/governance/audit/log-tree/checkpoint-store.js';
import { startCheckpointPublisher } from '../src/governance/audit/log-tree/checkpoint-publisher.js';
import { formatCheckpoint } from '../src/governance/audit/log-tree/checkpoint.js';
import { createMongoLogTree, type LogTreeDoc } from '../src/governance/audit/log-tree/log-tree-store.js';
import { createLogTiles } from '../src/governance/audit/log-tree/log-tiles.js';
import { TILE_WIDTH } from '../src/governance/audit/log-tree/tile-path.js';
import { appendHashes, leafHash, treeHash, type Hash } from '../src/governance/audit/log-tree/merkle-tree.js';
import { verifyConsistency, verifyInclusion } from '../src/governance/audit/log-tree/merkle-verify.js';
import { noteSigner, signNote } from '../src/governance/audit/log-tree/signed-note.js';
import { createSigner } from '../src/governance/certificates/signing.js';
import { Collections } from '../src/substrate/mongo/collections.js';
import { chainLinkId } from '../src/substrate/mongo/hash-chain.js';
import { runBench } from './lib/bench-run.js';
import { benchAuditInput, timed } from './lib/audit-workload.js';

const N = Number(process.env.BENCH_ENTRIES ?? 20_000);
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
  const append = (tenant: string) => async () => {
    for (let b = 0; b < batches; b++)
      await log.appendMany(Array.from({ length: 100 }, (_, i) => input(tenant, b * 100 + i)));
  };
  const store = () =>
    createCheckpointStore(db, { audit: log, tree: createMongoLogTree(db), signer, origin: 'bench/audit' });
  const chainOnly = await timed(append('chain'));
  // The tree catching up with a whole chain at once, and a checkpoint signed over it.
  const catchUp = await timed(() => store().publish('chain'));
  // As the worker runs it: a checkpoint round beside the appends, every second (5 s by default), over every log.
  const publisher = startCheckpointPublisher({ checkpoints: store(), everyMs: 1000, log: quiet });
  const beside = await timed(append('beside'));
  await publisher.stop();
  const inline = await timed(async () => {
    const s = store();
    for (let b = 0; b < batches; b++) {
      await log.appendMany(Array.from({ length: 100 }, (_, i) => input('inline', b * 100 + i)));
      await s.publish('inline');
    }
  });
  const rate = (ms: number) => Math.round((batches * 100 * 1000) / ms);
  const row = (label: string, ms: number) =>
    console.log(`${label.padEnd(66)} ${String(rate(ms)).padStart(7)} ${(chainOnly / ms).toFixed(2).padStart(6)}`);
  console.log(`\nappend rate, entries/s (${batches * 100} entries, batches of 100, 1 appender), and ÷ the chain alone`);
  row('chain alone', chainOnly);
  row("chain, with the worker's checkpoint round beside it (every 1 s)", beside);
  row('tree catching up with the whole chain, then one checkpoint', catchUp);
  row('chain, with the tree extended and a checkpoint signed after each batch', inline);
}

const quiet = { warn: () => undefined, debug: () => undefined };

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
  console.log(
    `\nproofs, ${PROOFS} random ones per size, then the same ${PROOFS} again: bytes (largest), ms to serve from the` +
      ' store (p50 / p95; cold = first asked, warm = asked again), µs to verify',
  );
  const head = [
    'entries',
    'write s',
    'incl. B',
    'cold ms',
    'warm ms',
    'verify µs',
    'cons. B',
    'cold ms',
    'warm ms',
    'tile L0 ms',
    'tile L1 ms',
  ];
  console.log(head.map((h, i) => h.padStart(i === 0 ? 9 : 12)).join(' '));
  for (const size of SIZES) {
    const tenant = `size-${size}`;
    const started = performance.now();
    const root = await writeTree(db, tenant, size);
    const writeS = (performance.now() - started) / 1000;
    // One process serving: its cache of leaves read for proofs starts empty.
    const tree = createMongoLogTree(db);
    const roots = new Map<number, Hash>();
    const times = { inc: [[], []] as number[][], con: [[], []] as number[][] };
    let [incBytes, conBytes, verifyUs] = [0, 0, 0];
    for (const pass of [0, 1]) {
      const random = seeded(size);
      for (let i = 0; i < PROOFS; i++) {
        const index = Math.floor(random() * size);
        const from = 1 + Math.floor(random() * size);
        let proof: Hash[] = [];
        times.inc[pass]!.push(await timed(async () => (proof = await tree.inclusion(tenant, index, size))));
        incBytes = Math.max(incBytes, proof.length * 32);
        const t0 = performance.now();
        if (!verifyInclusion(leafHash(Buffer.from(`entry ${index}`)), index, size, proof, root))
          throw new Error('bad inclusion proof');
        verifyUs += (performance.now() - t0) * 1000;
        if (!roots.has(from)) roots.set(from, await tree.root(tenant, from));
        times.con[pass]!.push(await timed(async () => (proof = await tree.consistency(tenant, from, size))));
        conBytes = Math.max(conBytes, proof.length * 32);
        if (!verifyConsistency(from, size, proof, roots.get(from)!, root)) throw new Error('bad consistency proof');
      }
    }
    // Tiles: full level-0 tiles at random, and the level-1 tile (partial below 2^24 entries; none below 2^16).
    const tiles = createLogTiles({ tree, audit: createMongoAuditLog(db) });
    const tileTimes: number[][] = [[], []];
    const random = seeded(size + 1);
    const fullTiles = Math.floor(size / TILE_WIDTH);
    const levelOne = Math.min(TILE_WIDTH, Math.floor(size / TILE_WIDTH ** 2));
    for (let i = 0; i < PROOFS / 4; i++) {
      if (fullTiles > 0) {
        const index = Math.floor(random() * fullTiles);
        tileTimes[0]!.push(await timed(() => tiles.read(tenant, { level: 0, index, width: TILE_WIDTH })));
      }
      if (levelOne > 0)
        tileTimes[1]!.push(await timed(() => tiles.read(tenant, { level: 1, index: 0, width: levelOne })));
    }
    const ms = (xs: number[]) => {
      if (xs.length === 0) return '–';
      const sorted = [...xs].sort((a, b) => a - b);
      return `${quantile(sorted, 0.5).toFixed(2)} / ${quantile(sorted, 0.95).toFixed(2)}`;
    };
    const cells = [
      String(size),
      writeS.toFixed(1),
      String(incBytes),
      ms(times.inc[0]!),
      ms(times.inc[1]!),
      (verifyUs / (2 * PROOFS)).toFixed(0),
      String(conBytes),
      ms(times.con[0]!),
      ms(times.con[1]!),
      ms(tileTimes[0]!),
      ms(tileTimes[1]!),
    ];
    console.log(cells.map((c, i) => c.padStart(i === 0 ? 9 : 12)).join(' '));
  }
}

/** A seeded generator: the warm pass asks for exactly the cold pass's proofs. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
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
