#!/usr/bin/env node
// Measures MongoDB-driver latencies against a FerretDB (or MongoDB) endpoint on
// one collection: insertMany, parallel findOne by _id, parallel equality lookups
// on indexed fields (top-level and nested), countDocuments, parallel deleteOne.
// Optional checks: unique index violation (E11000) and compact {force: true}.
//
// Used to compare FerretDB-on-PostgreSQL with and without the GIN companion
// indexes that stack/postgres/bootstrap.sql adds (run it once with the event
// trigger enabled and once, on another collection, with it disabled).
//
//   node stack/ferretdb/measure-gin.mjs [--uri mongodb://127.0.0.1:27017/]
//     [--db lethe_bench] [--coll gin_check] [--n 100000] [--parallel 100]
//     [--rounds 3] [--batch 100000] [--nested-parallel 5] [--keep]
//     [--skip-checks] [--label text] [--reuse]
//
// --reuse measures an existing collection left by an earlier run with --keep
// (no drop, no index creation, no insert; it reads _id/subjectId/meta.ref of
// every document first).
//
// Note: FerretDB 1.24 never pushes a dotted ("a.b") filter down to PostgreSQL
// for find/aggregate (countDocuments is an aggregate), only for delete, update,
// findAndModify, count and distinct; so findOne({'meta.ref'}) reads the whole
// collection (seconds at 10^5 documents) and runs with --nested-parallel, once.
//
// Prints a human-readable report on stderr and one JSON object on stdout.
// The `mongodb` package (v6) is resolved like require() does: from a
// node_modules above this file, or from NODE_PATH.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { MongoClient } = require('mongodb');

const { values: opt } = parseArgs({
  options: {
    uri: { type: 'string', default: process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27017/' },
    db: { type: 'string', default: 'lethe_bench' },
    coll: { type: 'string', default: 'gin_check' },
    n: { type: 'string', default: '100000' },
    parallel: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    batch: { type: 'string', default: '100000' },
    'nested-parallel': { type: 'string', default: '5' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    'skip-checks': { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
  },
});

const N = Number(opt.n);
const P = Number(opt.parallel);
const ROUNDS = Number(opt.rounds);
const BATCH = Number(opt.batch);
const NP = Number(opt['nested-parallel']);
const SUBJECTS = Math.max(1, Math.floor(N / 5)); // 5 documents per subjectId
if (!(N > 0 && P > 0 && ROUNDS > 0 && BATCH > 0))
  throw new Error('--n, --parallel, --rounds and --batch must be positive');
if (N < P * (2 * ROUNDS + 4) + NP) throw new Error('--n too small for --parallel x --rounds deletes');

const log = (...a) => console.error(...a);
const ms = (x) => Math.round(x * 10) / 10;

function pick(arr, count, used) {
  // Distinct random elements not yet in `used`.
  const out = [];
  while (out.length < count) {
    const i = Math.floor(Math.random() * arr.length);
    if (used.has(i)) continue;
    used.add(i);
    out.push(arr[i]);
  }
  return out;
}

function stats(lat) {
  const s = [...lat].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: ms(q(0.5)), p95: ms(q(0.95)), max: ms(s[s.length - 1]) };
}

// Runs `fn(arg)` for every arg at once; returns wall time and per-op latencies.
async function parallel(args, fn) {
  const lat = [];
  const t0 = performance.now();
  const results = await Promise.all(
    args.map(async (a) => {
      const t = performance.now();
      const r = await fn(a);
      lat.push(performance.now() - t);
      return r;
    }),
  );
  return { wallMs: performance.now() - t0, lat, results };
}

async function measure(name, rounds, makeArgs, fn, check) {
  const walls = [];
  let lat = [];
  for (let r = 0; r < rounds; r++) {
    const res = await parallel(makeArgs(r), fn);
    if (check) check(res.results);
    walls.push(res.wallMs);
    lat = lat.concat(res.lat);
  }
  const sorted = [...walls].sort((a, b) => a - b);
  const out = {
    wallMsMedian: ms(sorted[Math.floor(sorted.length / 2)]),
    wallMsRounds: walls.map(ms),
    perOp: stats(lat),
  };
  log(
    `${name.padEnd(34)} wall ${String(out.wallMsMedian).padStart(8)} ms (rounds ${out.wallMsRounds.join(', ')})  per op p50 ${out.perOp.p50} p95 ${out.perOp.p95} max ${out.perOp.max} ms`,
  );
  return out;
}

const client = new MongoClient(opt.uri, { maxPoolSize: Math.max(100, P), serverSelectionTimeoutMS: 10000 });
const report = { label: opt.label, uri: opt.uri, db: opt.db, coll: opt.coll, n: N, parallel: P, rounds: ROUNDS };

try {
  await client.connect();
  const db = client.db(opt.db);
  let coll;
  let docs;
  let subjects;
  if (opt.reuse) {
    coll = db.collection(opt.coll);
    const t = performance.now();
    docs = await coll
      .find({ seq: { $gte: 1000 } }, { projection: { _id: 1, subjectId: 1, meta: 1, seq: 1 } })
      .toArray();
    report.reuse = { docs: docs.length, readMs: ms(performance.now() - t) };
    log(`${'reuse: read existing docs'.padEnd(34)} ${docs.length} docs in ${report.reuse.readMs} ms`);
    // Only subjects whose 5 documents all survived earlier deletes.
    const perSubject = new Map();
    for (const d of docs) perSubject.set(d.subjectId, (perSubject.get(d.subjectId) ?? 0) + 1);
    subjects = [...perSubject].filter(([, c]) => c === 5).map(([s]) => s);
  } else {
    await db
      .collection(opt.coll)
      .drop()
      .catch(() => {});
    coll = await db.createCollection(opt.coll);
    let t = performance.now();
    await coll.createIndex({ subjectId: 1 }, { name: 'subjectId_1' });
    await coll.createIndex({ tenant: 1, externalId: 1 }, { name: 'tenant_externalId_u', unique: true });
    await coll.createIndex({ 'meta.ref': 1 }, { name: 'meta_ref_1' });
    report.createIndexesMs = ms(performance.now() - t);

    docs = [];
    const created = new Date();
    for (let i = 0; i < N; i++) {
      docs.push({
        subjectId: `subj-${i % SUBJECTS}`,
        tenant: `t${i % 10}`,
        externalId: `ext-${i}`,
        meta: { ref: `ref-${i}`, kind: `k${i % 100}` },
        seq: i,
        payload: 'x'.repeat(100),
        createdAt: created,
      });
    }

    t = performance.now();
    for (let i = 0; i < N; i += BATCH) {
      await coll.insertMany(docs.slice(i, i + BATCH), { ordered: false });
    }
    const insertMs = performance.now() - t;
    report.insertMany = { ms: ms(insertMs), docsPerSec: Math.round(N / (insertMs / 1000)) };
    log(`${'insertMany'.padEnd(34)} ${N} docs in ${ms(insertMs)} ms (${report.insertMany.docsPerSec} docs/s)`);
    subjects = Array.from({ length: SUBJECTS }, (_, i) => `subj-${i}`);
  }

  const ids = docs.map((d) => d._id);
  const used = new Set();
  const usedSubj = new Set();
  const refs = docs.map((d) => d.meta.ref); // same index space as ids: share `used`

  // Open the driver's connections (and FerretDB's PostgreSQL pool) first.
  await parallel(
    Array.from({ length: P }, (_, i) => i),
    () => coll.findOne({ _id: ids[0] }),
  );

  const expectFound = (rs) => {
    if (rs.some((r) => r == null || (Array.isArray(r) && r.length === 0))) throw new Error('lookup found nothing');
  };

  report.findOneById = await measure(
    `findOne({_id}) x${P}`,
    ROUNDS,
    () => pick(ids, P, used),
    (id) => coll.findOne({ _id: id }),
    expectFound,
  );
  report.findBySubjectId = await measure(
    `find({subjectId}).toArray() x${P}`,
    ROUNDS,
    () => pick(subjects, P, usedSubj),
    (s) => coll.find({ subjectId: s }).toArray(),
    expectFound,
  );
  if (NP > 0) {
    report.findOneByNestedNoPushdown = await measure(
      `findOne({'meta.ref'}) x${NP}`,
      1,
      () => pick(refs, NP, used),
      (r) => coll.findOne({ 'meta.ref': r }),
      expectFound,
    );
  }
  report.countDocumentsBySubject = await measure(
    'countDocuments({subjectId})',
    ROUNDS,
    () => pick(subjects, 1, usedSubj),
    (s) => coll.countDocuments({ subjectId: s }),
    (rs) => {
      if (rs[0] !== 5) throw new Error(`count ${rs[0]} != 5`);
    },
  );
  report.countDocumentsAll = await measure(
    'countDocuments({})',
    ROUNDS,
    () => [null],
    () => coll.countDocuments({}),
  );
  report.deleteOneById = await measure(
    `deleteOne({_id}) x${P}`,
    ROUNDS,
    () => pick(ids, P, used),
    (id) => coll.deleteOne({ _id: id }),
    (rs) => {
      if (rs.some((r) => r.deletedCount !== 1)) throw new Error('deleteOne deleted nothing');
    },
  );
  report.deleteOneByNested = await measure(
    `deleteOne({'meta.ref'}) x${P}`,
    ROUNDS,
    () => pick(refs, P, used),
    (r) => coll.deleteOne({ 'meta.ref': r }),
    (rs) => {
      if (rs.some((r) => r.deletedCount !== 1)) throw new Error('deleteOne deleted nothing');
    },
  );

  if (!opt['skip-checks']) {
    const checks = {};
    const dup = async (doc) => {
      try {
        await coll.insertOne(doc);
        return { ok: false, note: 'duplicate accepted' };
      } catch (e) {
        return {
          ok: e.code === 11000 && /^E11000/.test(e.message),
          code: e.code,
          message: String(e.message).slice(0, 200),
        };
      }
    };
    checks.uniqueCompound = await dup({ tenant: 't1', externalId: 'ext-1', subjectId: 'dup' });
    // An _id that is neither deleted above nor by the deleteMany below.
    const alive = ids.find((_, i) => docs[i].seq >= 1000 && !used.has(i));
    checks.uniqueId = await dup({ _id: alive, x: 1 });
    for (const c of ['uniqueCompound', 'uniqueId']) {
      log(
        `${c.padEnd(34)} ${checks[c].ok ? 'OK' : 'FAILED'}  code ${checks[c].code}  ${checks[c].message ?? checks[c].note}`,
      );
    }

    await coll.deleteMany({ seq: { $lt: 1000 } });
    for (const force of [false, true]) {
      let t = performance.now();
      try {
        const r = await db.command({ compact: opt.coll, force });
        checks[force ? 'compactForce' : 'compact'] = { ok: r.ok === 1, ms: ms(performance.now() - t), reply: r };
      } catch (e) {
        checks[force ? 'compactForce' : 'compact'] = {
          ok: false,
          ms: ms(performance.now() - t),
          error: String(e.message),
        };
      }
      const c = checks[force ? 'compactForce' : 'compact'];
      log(
        `${`compact force:${force}`.padEnd(34)} ${c.ok ? 'OK' : 'FAILED'} in ${c.ms} ms ${JSON.stringify(c.reply ?? c.error)}`,
      );
    }
    // Lookups must still work after the table rewrite.
    const after = await coll.findOne({ _id: alive });
    checks.findAfterCompact = { ok: after != null };
    report.checks = checks;
  }

  if (!opt.keep) await coll.drop();
  console.log(JSON.stringify(report));
} finally {
  await client.close();
}
