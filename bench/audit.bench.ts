/**
 * Audit-log benchmark against the configured MongoDB (FerretDB locally): `npm run bench:audit`.
 *
 * Append rate of the real hash-chained log against plain `insertOne` of the same documents (same indexes, no
 * head read, no chain), sequentially and with 8 concurrent appenders — both as 8 callers sharing one log (one
 * process: group commit) and as 8 log instances (8 processes: E11000 races). Then, with ≥ 10⁴ entries stored,
 * the cost of finding a tenant's head (sort + limit vs `_id` probes) and of streaming a chain (`_id` lookups vs a
 * seq range query). Everything runs in a database of its own, dropped at the end.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { loadConfig } from '../src/config/load-config.js';
import { sealEntry, GENESIS_HASH, verifyChain } from '../src/governance/audit/audit-chain.js';
import type { AuditEntry } from '../src/governance/audit/audit-log.port.js';
import { auditEntryId, createMongoAuditLog } from '../src/governance/audit/mongo-audit-log.js';
import { Collections, mapBounded } from '../src/substrate/mongo/collections.js';
import { benchName, runBench } from './lib/bench-run.js';
import { benchAuditInput, timed } from './lib/audit-workload.js';

const N = Number(process.env.BENCH_ENTRIES ?? 3000);
const CONCURRENCY = 8;
const BIG = Number(process.env.BENCH_BIG_CHAIN ?? 20_000);
const PLAIN = 'audit_plain';

const input = benchAuditInput;

/** The same document the log writes, sealed locally: what an unchained insert costs. */
function plainDoc(tenant: string, i: number): AuditEntry & { _id: string } {
  const entry = sealEntry({
    ...input(tenant, i),
    target: `mem_${i}`,
    details: { step: i, purged: 3, request: 'req_0001' },
    seq: i + 1,
    at: new Date().toISOString(),
    idempotencyKey: randomUUID(),
    prevHash: GENESIS_HASH,
  });
  return { _id: randomUUID(), ...entry };
}

/** Median latency of `fn` over `runs`, in ms. */
async function median(runs: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await timed(fn));
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const rate = (count: number, ms: number): number => Math.round((count / ms) * 1000);
const tenantId = (label: string): string => benchName(`${label}-${randomUUID().slice(0, 6)}`);

async function inParallel(workers: number, perWorker: number, fn: (worker: number, i: number) => Promise<unknown>) {
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) await fn(w, i);
    }),
  );
}

async function assertChain(db: Db, tenant: string, expected: number): Promise<void> {
  const entries: AuditEntry[] = [];
  for await (const e of createMongoAuditLog(db).entries(tenant)) entries.push(e);
  const result = verifyChain(entries, { tenant });
  if (!result.ok || result.count !== expected) throw new Error(`chain of ${tenant} broken: ${JSON.stringify(result)}`);
}

async function appendRates(db: Db): Promise<void> {
  const plain = db.collection<AuditEntry & { _id: string }>(PLAIN);
  const perWorker = Math.floor(N / CONCURRENCY);
  const total = perWorker * CONCURRENCY;
  const rows: [string, number, number][] = [];

  let t = tenantId('seq');
  const log = createMongoAuditLog(db);
  const chainedSeq = await timed(async () => {
    for (let i = 0; i < N; i++) await log.append(input(t, i));
  });
  await assertChain(db, t, N);
  t = tenantId('plain-seq');
  const plainSeq = await timed(async () => {
    for (let i = 0; i < N; i++) await plain.insertOne(plainDoc(t, i));
  });
  rows.push(['sequential (1 appender)', rate(N, chainedSeq), rate(N, plainSeq)]);

  t = tenantId('shared');
  const shared = createMongoAuditLog(db);
  const chainedShared = await timed(() =>
    inParallel(CONCURRENCY, perWorker, (w, i) => shared.append(input(t, w * N + i))),
  );
  await assertChain(db, t, total);
  t = tenantId('plain-par');
  const plainPar = await timed(() =>
    inParallel(CONCURRENCY, perWorker, (w, i) => plain.insertOne(plainDoc(t, w * N + i))),
  );
  rows.push([
    `${CONCURRENCY} concurrent, one process (group commit)`,
    rate(total, chainedShared),
    rate(total, plainPar),
  ]);

  t = tenantId('procs');
  const logs = Array.from({ length: CONCURRENCY }, () => createMongoAuditLog(db));
  const chainedProcs = await timed(() =>
    inParallel(CONCURRENCY, perWorker, (w, i) => logs[w]!.append(input(t, w * N + i))),
  );
  await assertChain(db, t, total);
  rows.push([
    `${CONCURRENCY} concurrent, ${CONCURRENCY} processes (E11000 races)`,
    rate(total, chainedProcs),
    rate(total, plainPar),
  ]);

  t = tenantId('many');
  const batches = Math.floor(N / 100);
  const chainedMany = await timed(async () => {
    for (let b = 0; b < batches; b++)
      await log.appendMany(Array.from({ length: 100 }, (_, i) => input(t, b * 100 + i)));
  });
  await assertChain(db, t, batches * 100);
  t = tenantId('plain-many');
  const plainMany = await timed(async () => {
    for (let b = 0; b < batches; b++)
      await plain.insertMany(Array.from({ length: 100 }, (_, i) => plainDoc(t, b * 100 + i)));
  });
  rows.push([
    'appendMany, batches of 100 (1 appender)',
    rate(batches * 100, chainedMany),
    rate(batches * 100, plainMany),
  ]);

  console.log(
    `\nappend rate, entries/s (${N} entries per row; unchained = insertOne/insertMany of the same documents)`,
  );
  console.log(`${'scenario'.padEnd(48)} ${'chained'.padStart(8)} ${'unchained'.padStart(10)} ${'ratio'.padStart(6)}`);
  for (const [label, chained, unchained] of rows) {
    console.log(
      `${label.padEnd(48)} ${String(chained).padStart(8)} ${String(unchained).padStart(10)} ${(chained / unchained).toFixed(2).padStart(6)}`,
    );
  }
}

async function lookups(db: Db): Promise<void> {
  const audit = db.collection<AuditEntry & { _id: string }>(Collections.audit);
  const t = tenantId('big');
  const log = createMongoAuditLog(db);
  for (let b = 0; b < BIG; b += 1000) {
    await log.appendMany(Array.from({ length: Math.min(1000, BIG - b) }, (_, i) => input(t, b + i)));
  }
  const stored = await audit.estimatedDocumentCount();
  console.log(
    `\nhead lookup and streaming, tenant chain of ${BIG} entries, ${stored} entries in the collection (median ms)`,
  );
  const rows: [string, number][] = [
    [
      'find({tenant}).sort({seq:-1}).limit(1)',
      await median(3, () => audit.find({ tenant: t }).sort({ seq: -1 }).limit(1).next()),
    ],
    [
      'find({tenant}).sort({_id:-1}).limit(1)',
      await median(3, () => audit.find({ tenant: t }).sort({ _id: -1 }).limit(1).next()),
    ],
    ['findOne({_id}) (one probe)', await median(50, () => audit.findOne({ _id: auditEntryId(t, BIG) }))],
    ['head(), cold process (probe + bisect from 0)', await median(15, () => createMongoAuditLog(db).head(t))],
    ['head(), warm process (probe above the known head)', await median(50, () => log.head(t))],
    ['append(), warm process', await median(50, () => log.append(input(t, 0)))],
  ];
  for (const [label, ms] of rows) console.log(`${label.padEnd(52)} ${ms.toFixed(1).padStart(8)}`);

  const last = BIG + 50;
  const count = async (entries: AsyncIterable<unknown>): Promise<number> => {
    let n = 0;
    for await (const _ of entries) n++;
    return n;
  };
  const stream: [string, number, number][] = [];
  const viaLog = await timed(async () => {
    if ((await count(log.entries(t))) !== last) throw new Error('short stream');
  });
  stream.push(['entries(), whole chain (sorted seq range query)', viaLog, last]);
  const viaIds = await timed(async () => {
    const seqs = Array.from({ length: last }, (_, i) => i + 1);
    await mapBounded(seqs, 16, (seq) => audit.findOne({ _id: auditEntryId(t, seq) }));
  });
  stream.push(['whole chain by _id lookups (16 in flight)', viaIds, last]);
  stream.push([
    'entries(), 500-entry slice (_id lookups)',
    await median(5, () => count(log.entries(t, { fromSeq: 5000, toSeq: 5499 }))),
    500,
  ]);
  stream.push([
    '500-entry slice by sorted seq range query',
    await median(5, () =>
      audit
        .find({ tenant: t, seq: { $gte: 5000, $lte: 5499 } })
        .sort({ seq: 1 })
        .toArray(),
    ),
    500,
  ]);
  console.log(`\nstreaming a chain of ${last} entries (ms, entries/s)`);
  for (const [label, ms, n] of stream)
    console.log(`${label.padEnd(52)} ${ms.toFixed(0).padStart(8)} ${String(rate(n, ms)).padStart(7)}/s`);
}

async function main(): Promise<void> {
  const config = loadConfig();
  const client = new MongoClient(config.mongo.uri, { maxPoolSize: 32 });
  const db = client.db(`${config.mongo.dbName}_bench_audit`);
  try {
    await db.dropDatabase();
    await createMongoAuditLog(db).ensureIndexes();
    await db.collection(PLAIN).createIndex({ tenant: 1, seq: 1 }, { unique: true });
    await db.collection(PLAIN).createIndex({ tenant: 1, idempotencyKey: 1 }, { unique: true });
    console.log(`audit bench against ${config.mongo.uri.replace(/\/\/[^@]*@/, '//')}`);
    await appendRates(db);
    await lookups(db);
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
}

await runBench(main);
