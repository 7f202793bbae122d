/**
 * Substrate benchmark (`npm run bench:substrate`): four figures, each beside its baseline, from one run.
 *
 * (a) Ingest through the governed path the app serves today — `POST /v1/tenants/{tenant}/batches` on the API server
 *     the app builds (injected, no socket), staged by the write gateway and carried by the ingestion workflow on a
 *     worker built as the app's worker is (admission checks, events, lineage, memories, audit, index) — against raw
 *     `insertMany` of the same event and memory documents plus `_bulk` of the same index documents.
 * (b) Lineage closure (`services.lineage.closure`: level by level with up to 32 lookups in flight, or a bounded
 *     pass over the tenant's lineage when a level is a large part of it) against a plain BFS in driver code with
 *     32 single-key lookups in flight, on a generated graph of ~5 000 records of depth 5; median of 3, alternating.
 * (c) Audit append, hash-chained (`append` one by one, `appendMany` in hundreds) against unchained
 *     `insertOne`/`insertMany` of the same sealed documents into a collection with the same unique indexes.
 * (d) Hybrid query (BM25 + kNN, tenant + namespace filters, fused in the client) against unfiltered BM25 alone,
 *     p50/p95, round-robin over the memories ingested in (a).
 * Sealing: (a) also runs the same governed path over stores that do not seal content (a second worker and API on
 * their own task queue and tenant), batch by batch with the sealed one; (e) reads 1 000 of the memories (a) admitted
 * by id, sealed with a cold key cache against not sealed.
 *
 * MongoDB work runs in a database of its own, dropped at start and end; the bench tenants' indices are dropped.
 * Sizes: BENCH_INGEST_BATCHES (4) × BENCH_BATCH_SIZE (500 events + 500 memories), BENCH_GRAPH_WIDTH (834 per
 * level), BENCH_AUDIT_ENTRIES (1000), BENCH_QUERIES (200).
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { DefaultLogger, NativeConnection, Runtime as TemporalRuntime } from '@temporalio/worker';
import { loadConfig } from '../src/config/load-config.js';
import { createRuntime, type Runtime } from '../app/runtime.js';
import { createServices, type Services } from '../app/services.js';
import { buildApiServer } from '../app/api/server.js';
import { createLetheWorker } from '../app/worker/worker.js';
import { mintToken } from '../src/governance/auth/tokens.js';
import { GENESIS_HASH, sealEntry, verifyChain } from '../src/governance/audit/audit-chain.js';
import type { AuditEntry, AuditEntryInput } from '../src/governance/audit/audit-log.port.js';
import { createMongoAuditLog } from '../src/governance/audit/mongo-audit-log.js';
import { lineageEdgeDoc, type LineageEdgeDoc } from '../src/substrate/lineage/lineage-store.js';
import { Collections } from '../src/substrate/mongo/collections.js';
import { rankWindow } from '../src/substrate/search/elasticsearch-search-index.js';
import { tenantIndexNames, toIndexDocument } from '../src/substrate/search/index-layout.js';
import type { EventRecord, MemoryRecord } from '../src/substrate/model/records.js';
import { fmt, median, percentile, rate, rng, sentenceMaker, timed } from './lib/substrate-measure.js';
import { ingestBatches, storedDocuments, type IngestBatch } from './lib/substrate-samples.js';
import { PLAIN_BFS_CONCURRENCY, layeredGraph, plainClosure } from './lib/substrate-graph.js';
import { benchName, runBench } from './lib/bench-run.js';
import { unsealedRuntime } from './lib/unsealed.js';
import { timed as timedValue } from './lib/stack-report.js';
import type { Config } from '../src/config/config.js';
import { isSealed } from '../src/substrate/crypto/content-seal.js';

const BATCHES = Number(process.env.BENCH_INGEST_BATCHES ?? 4);
const BATCH_SIZE = Number(process.env.BENCH_BATCH_SIZE ?? 500);
const GRAPH_DEPTH = 5;
const GRAPH_WIDTH = Number(process.env.BENCH_GRAPH_WIDTH ?? 834);
const AUDIT_ENTRIES = Number(process.env.BENCH_AUDIT_ENTRIES ?? 1000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const READS = 1000;
const WARMUP_QUERIES = 20;
const K = 10;
const PLAIN_AUDIT = 'bench_audit_plain';

interface Row {
  label: string;
  lethe: string;
  baseline: string;
  ratio: number;
}

interface Bench {
  runtime: Runtime;
  services: Services;
  /** The same clients and stores with content not sealed, and services on a task queue of their own. */
  unsealed: { runtime: Runtime; services: Services };
  suffix: string;
}

interface Tenants {
  ingest: string;
  unsealed: string;
  raw: string;
  lineage: string;
  audit: string;
}

/** The API server and a worker as the app builds them, on a task queue of their own; `post` admits one batch. */
async function governedPath(runtime: Runtime, services: Services, tenant: string) {
  const connection = await NativeConnection.connect({ address: runtime.config.temporal.address });
  const bundleStart = performance.now();
  const worker = await createLetheWorker(runtime, { taskQueue: services.taskQueue, services, connection });
  console.log(
    `  worker on ${services.taskQueue} ready in ${fmt((performance.now() - bundleStart) / 1000, 1)} s (bundle)`,
  );
  const running = worker.run();
  const api = await buildApiServer({
    log: runtime.log,
    probes: runtime.probes,
    services,
    tokenKeys: { hs256Secret: runtime.config.tokens.hs256Secret! },
  });
  const token = await mintToken(runtime.config.tokens.hs256Secret!, { id: 'bench-agent', tenant, roles: ['agent'] });
  return {
    async post(batch: IngestBatch): Promise<void> {
      const response = await api.inject({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        headers: { authorization: `Bearer ${token}` },
        payload: batch,
      });
      if (response.statusCode !== 201)
        throw new Error(`batch answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
      const { indexed } = response.json<{ indexed: number }>();
      if (indexed !== batch.memories.length) throw new Error(`indexed ${indexed} of ${batch.memories.length}`);
    },
    async close(): Promise<void> {
      await api.close();
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

async function benchIngest(bench: Bench, tenants: Tenants): Promise<Row[]> {
  const { runtime, services } = bench;
  const sealed = await governedPath(runtime, services, tenants.ingest);
  const unsealed = await governedPath(bench.unsealed.runtime, bench.unsealed.services, tenants.unsealed);
  try {
    // Raw: the same documents straight into the collections and the index, embedding included.
    await services.index.ensureTenantIndex(tenants.raw);
    const { alias } = tenantIndexNames(runtime.config.elasticsearch.indexPrefix, tenants.raw);
    const eventsCollection = runtime.db.collection<EventRecord>(Collections.events);
    const memoriesCollection = runtime.db.collection<MemoryRecord>(Collections.memories);
    let embedMs = 0;
    const raw = async (docs: { events: EventRecord[]; memories: MemoryRecord[] }): Promise<void> => {
      await eventsCollection.insertMany(docs.events);
      await memoriesCollection.insertMany(docs.memories);
      const start = performance.now();
      const vectors = await services.embedder.embed(docs.memories.map((m) => m.content));
      embedMs += performance.now() - start;
      const response = await runtime.es.bulk({
        index: alias,
        refresh: 'wait_for',
        operations: docs.memories.flatMap((m, i) => [
          { index: { _id: m._id } },
          toIndexDocument(m, vectors[i] ?? null),
        ]),
      });
      if (response.errors) throw new Error('raw _bulk reported item errors');
    };
    const [warmup] = ingestBatches(1, 20, 99);
    await sealed.post(warmup!);
    await unsealed.post(warmup!);
    await raw(storedDocuments(services.tenantMacs, tenants.raw, warmup!));
    embedMs = 0;
    const batches = ingestBatches(BATCHES, BATCH_SIZE, 7);
    const perBatch: number[] = [];
    let unsealedMs = 0;
    let rawMs = 0;
    // Alternating, so that load from elsewhere on the machine falls on every path alike; the sealed and the unsealed
    // path take turns going first.
    for (const [i, batch] of batches.entries()) {
      const timeSealed = async () => perBatch.push(await timed(() => sealed.post(batch)));
      const timeUnsealed = async () => (unsealedMs += await timed(() => unsealed.post(batch)));
      if (i % 2 === 0) {
        await timeSealed();
        await timeUnsealed();
      } else {
        await timeUnsealed();
        await timeSealed();
      }
      const docs = storedDocuments(services.tenantMacs, tenants.raw, batch);
      rawMs += await timed(() => raw(docs));
    }
    const workflowMs = perBatch.reduce((sum, ms) => sum + ms, 0);

    const records = BATCHES * BATCH_SIZE * 2;
    const workflowRate = rate(records, workflowMs);
    const unsealedRate = rate(records, unsealedMs);
    const rawRate = rate(records, rawMs);
    console.log(`  ${BATCHES} batches of ${BATCH_SIZE} events + ${BATCH_SIZE} memories (${fmt(records)} records)`);
    console.log(
      `  workflow path: ${fmt(workflowMs)} ms, ${fmt(workflowRate)} records/s; per batch p50 ${fmt(median(perBatch))} ms`,
    );
    console.log(`  workflow path, content not sealed: ${fmt(unsealedMs)} ms, ${fmt(unsealedRate)} records/s`);
    console.log(
      `  raw insertMany + _bulk: ${fmt(rawMs)} ms, ${fmt(rawRate)} records/s (embedding ${fmt(embedMs)} ms of it)`,
    );
    return [
      {
        label: '(a) ingest, records/s',
        lethe: `${fmt(workflowRate)} workflow path`,
        baseline: `${fmt(rawRate)} insertMany + _bulk`,
        ratio: workflowRate / rawRate,
      },
      {
        label: '(a) ingest, sealed vs not, records/s',
        lethe: `${fmt(workflowRate)} content sealed`,
        baseline: `${fmt(unsealedRate)} same path, not sealed`,
        ratio: workflowRate / unsealedRate,
      },
    ];
  } finally {
    await sealed.close();
    await unsealed.close();
  }
}

/**
 * Reads of 1 000 admitted records by id (`services.memories.getMany`, what the access package, the consoles and
 * exposure read by), sealed against not sealed, each round in a process state that has just started: services over
 * a fresh runtime, so the data keys are read from the vault (a cold key cache). Median of 5, alternating.
 */
async function benchReads(bench: Bench, tenants: Tenants, config: Config): Promise<Row> {
  const idsOf = async (tenant: string) =>
    (
      await bench.runtime.db
        .collection<MemoryRecord>(Collections.memories)
        .find({ tenant }, { projection: { _id: 1 } })
        .limit(READS)
        .toArray()
    ).map((m) => m._id);
  const ids = await idsOf(tenants.ingest);
  const unsealedIds = await idsOf(tenants.unsealed);
  if (ids.length < READS || unsealedIds.length < READS)
    throw new Error(`reads: ${ids.length} and ${unsealedIds.length} memories admitted, ${READS} needed`);
  const sealedMs: number[] = [];
  const unsealedMs: number[] = [];
  for (let round = 0; round < 5; round++) {
    const fresh = createRuntime(config, 'lethe-bench');
    try {
      await fresh.cipher.vault.ensureIndexes();
      const sealed = createServices(fresh, { taskQueue: bench.services.taskQueue });
      const unsealed = createServices(unsealedRuntime(fresh), { taskQueue: bench.services.taskQueue });
      const readSealed = async () => {
        const { ms, value } = await timedValue(() => sealed.memories.getMany(tenants.ingest, ids));
        if (value.length !== READS || value.some((m) => isSealed(m.content)))
          throw new Error(`reads: ${value.length} of ${READS} sealed records opened`);
        sealedMs.push(ms);
      };
      const readUnsealed = async () => {
        const { ms, value } = await timedValue(() => unsealed.memories.getMany(tenants.unsealed, unsealedIds));
        if (value.length !== READS) throw new Error(`reads: ${value.length} of ${READS} records read`);
        unsealedMs.push(ms);
      };
      if (round % 2 === 0) {
        await readSealed();
        await readUnsealed();
      } else {
        await readUnsealed();
        await readSealed();
      }
    } finally {
      await fresh.close();
    }
  }
  const s = median(sealedMs);
  const u = median(unsealedMs);
  console.log(`  getMany of ${READS}: sealed, key cache cold ${fmt(s)} ms; not sealed ${fmt(u)} ms (medians of 5)`);
  return {
    label: `(e) read ${fmt(READS)} records by id, records/s`,
    lethe: `${fmt(rate(READS, s))} sealed, cache cold`,
    baseline: `${fmt(rate(READS, u))} not sealed`,
    ratio: u / s,
  };
}

async function benchClosure(bench: Bench, tenant: string): Promise<Row> {
  const { runtime, services } = bench;
  const lineage = runtime.db.collection<LineageEdgeDoc>(Collections.lineage);
  const { levels, edges } = layeredGraph(tenant, GRAPH_DEPTH, GRAPH_WIDTH);
  const docs = edges.map((e) => lineageEdgeDoc(tenant, e.input, e.child));
  const writeMs = await timed(async () => {
    for (let i = 0; i < docs.length; i += 1000) await lineage.insertMany(docs.slice(i, i + 1000));
  });
  const records = levels.flat().length;
  console.log(
    `  graph: ${fmt(records)} records, depth ${GRAPH_DEPTH}, ${fmt(edges.length)} edges (insertMany ${fmt(writeMs)} ms)`,
  );
  const roots = levels[0]!;
  // Warm-up of both, on a slice of the roots.
  let result = await services.lineage.closure(tenant, roots.slice(0, 50));
  let plain = await plainClosure(lineage, tenant, roots.slice(0, 50));
  const runs: number[] = [];
  const plainRuns: number[] = [];
  // Alternating, so that load from elsewhere on the machine falls on both alike.
  for (let i = 0; i < 3; i++) {
    runs.push(await timed(async () => (result = await services.lineage.closure(tenant, roots))));
    plainRuns.push(await timed(async () => (plain = await plainClosure(lineage, tenant, roots))));
  }
  const closureMs = median(runs);
  const plainMs = median(plainRuns);
  const same =
    plain.derived.length === result.derived.length &&
    new Set([...plain.derived, ...result.derived]).size === plain.derived.length;
  if (!same) throw new Error('the plain BFS and the closure disagree');
  const scanned = result.scanned ? `, ${fmt(result.scanned)} edges read by bounded passes` : '';
  console.log(
    `  closure: ${fmt(closureMs)} ms (median of 3, alternating with the plain BFS), ${result.rounds} sequential rounds, ${fmt(result.lookups)} lookups ≤ 32 in flight${scanned}`,
  );
  console.log(
    `  plain BFS: ${fmt(plainMs)} ms (median of 3), ${fmt(plain.lookups)} lookups, ${plain.maxInFlight} in flight at most (bound ${PLAIN_BFS_CONCURRENCY}); same ${fmt(result.derived.length)} records`,
  );
  return {
    label: `(b) closure, ${fmt(records)} records depth ${GRAPH_DEPTH}, ms`,
    lethe: `${fmt(closureMs)} in ${result.rounds} rounds`,
    baseline: `${fmt(plainMs)} plain BFS, ${PLAIN_BFS_CONCURRENCY} in flight`,
    ratio: closureMs / plainMs,
  };
}

const auditInput = (tenant: string, i: number): AuditEntryInput => ({
  tenant,
  actor: 'wf-bench',
  action: 'memory.created',
  target: `mem_${i}`,
  outcome: 'ok',
  details: { step: i, stage: 'stg_bench' },
});

/** The document the chained log stores for an entry, sealed locally: what an unchained insert writes. */
function plainAuditDoc(tenant: string, i: number): AuditEntry & { _id: string } {
  const entry = sealEntry({
    ...auditInput(tenant, i),
    target: `mem_${i}`,
    details: { step: i, stage: 'stg_bench' },
    seq: i + 1,
    at: new Date().toISOString(),
    idempotencyKey: randomUUID(),
    prevHash: GENESIS_HASH,
  });
  return { _id: `${tenant}:${i + 1}`, ...entry };
}

async function benchAudit(bench: Bench, tenant: string): Promise<Row[]> {
  const { db } = bench.runtime;
  const plain = db.collection<AuditEntry & { _id: string }>(PLAIN_AUDIT);
  await plain.createIndex({ tenant: 1, seq: 1 }, { unique: true });
  await plain.createIndex({ tenant: 1, idempotencyKey: 1 }, { unique: true });
  const log = createMongoAuditLog(db);
  const rounds = Math.max(1, Math.floor(AUDIT_ENTRIES / 100));
  const seqTenant = `${tenant}-seq`;
  const manyTenant = `${tenant}-many`;
  const ms = { append: 0, appendMany: 0, insertOne: 0, insertMany: 0 };
  // Rounds of 100 entries per mode, alternating, so that load from elsewhere falls on every mode alike.
  for (let r = 0; r < rounds; r++) {
    const numbers = Array.from({ length: 100 }, (_, i) => r * 100 + i);
    ms.append += await timed(async () => {
      for (const i of numbers) await log.append(auditInput(seqTenant, i));
    });
    ms.insertOne += await timed(async () => {
      for (const i of numbers) await plain.insertOne(plainAuditDoc(`${tenant}-plain`, i));
    });
    ms.appendMany += await timed(() => log.appendMany(numbers.map((i) => auditInput(manyTenant, i))));
    ms.insertMany += await timed(() => plain.insertMany(numbers.map((i) => plainAuditDoc(`${tenant}-plain-many`, i))));
  }
  const total = rounds * 100;
  for (const [t, count] of [
    [seqTenant, total],
    [manyTenant, total],
  ] as const) {
    const entries: AuditEntry[] = [];
    for await (const entry of log.entries(t)) entries.push(entry);
    const verified = verifyChain(entries, { tenant: t });
    if (!verified.ok || verified.count !== count) throw new Error(`chain of ${t} does not verify`);
  }
  const rows = {
    append: rate(total, ms.append),
    appendMany: rate(total, ms.appendMany),
    insertOne: rate(total, ms.insertOne),
    insertMany: rate(total, ms.insertMany),
  };
  console.log(
    `  chained: append ${fmt(rows.append)}/s, appendMany(100) ${fmt(rows.appendMany)}/s — both chains verified`,
  );
  console.log(`  unchained: insertOne ${fmt(rows.insertOne)}/s, insertMany(100) ${fmt(rows.insertMany)}/s`);
  return [
    {
      label: '(c) audit append, entries/s, one by one',
      lethe: `${fmt(rows.append)} append()`,
      baseline: `${fmt(rows.insertOne)} insertOne`,
      ratio: rows.append / rows.insertOne,
    },
    {
      label: '    audit append, entries/s, in hundreds',
      lethe: `${fmt(rows.appendMany)} appendMany()`,
      baseline: `${fmt(rows.insertMany)} insertMany`,
      ratio: rows.appendMany / rows.insertMany,
    },
  ];
}

async function benchSearch(bench: Bench, tenant: string): Promise<Row[]> {
  const { runtime, services } = bench;
  const { alias } = tenantIndexNames(runtime.config.elasticsearch.indexPrefix, tenant);
  const count = (await runtime.es.count({ index: alias })).count;
  const sentence = sentenceMaker(rng(4242));
  const queries = Array.from({ length: QUERIES + WARMUP_QUERIES }, () => sentence(4));
  const filters = { namespaces: ['crm', 'support'] };
  const window = rankWindow(K);
  const modes = {
    hybrid: (q: string) => services.index.search(tenant, { text: q, k: K, filters }),
    bm25: (q: string) =>
      runtime.es.search({ index: alias, size: window, _source: false, query: { match: { content: q } } }),
  };
  const times = { hybrid: [] as number[], bm25: [] as number[] };
  let hybridHits = 0;
  for (const [i, q] of queries.entries()) {
    // Round-robin, so that machine noise falls on both modes alike.
    const start = performance.now();
    hybridHits += (await modes.hybrid(q)).length;
    const middle = performance.now();
    await modes.bm25(q);
    const end = performance.now();
    if (i < WARMUP_QUERIES) continue;
    times.hybrid.push(middle - start);
    times.bm25.push(end - middle);
  }
  if (hybridHits === 0) throw new Error('the hybrid query found nothing');
  const p = (values: number[], q: number) => percentile(values, q);
  console.log(
    `  ${fmt(count)} memories in ${alias}; ${QUERIES} queries per mode after ${WARMUP_QUERIES} warm-up, k=${K}, BM25 size ${window}`,
  );
  console.log(
    `  hybrid (namespace filter crm|support): p50 ${fmt(p(times.hybrid, 50), 1)} ms, p95 ${fmt(p(times.hybrid, 95), 1)} ms`,
  );
  console.log(`  BM25 unfiltered: p50 ${fmt(p(times.bm25, 50), 1)} ms, p95 ${fmt(p(times.bm25, 95), 1)} ms`);
  return [50, 95].map((q) => ({
    label: `(d) query p${q}, ms`,
    lethe: `${fmt(p(times.hybrid, q), 1)} hybrid, filtered`,
    baseline: `${fmt(p(times.bm25, q), 1)} BM25, unfiltered`,
    ratio: p(times.hybrid, q) / p(times.bm25, q),
  }));
}

function printSummary(rows: Row[]): void {
  const widths = [44, 26, 32];
  const line = (cells: string[], ratio: string) =>
    cells.map((c, i) => c.padEnd(widths[i]!)).join(' ') + ' ' + ratio.padStart(7);
  console.log(`\n${line(['', 'Lethe', 'baseline'], 'ratio')}`);
  for (const row of rows) console.log(line([row.label, row.lethe, row.baseline], row.ratio.toFixed(3)));
  console.log('ratio = Lethe ÷ baseline (rates: < 1 is slower than the baseline; times: < 1 is faster)');
}

async function main(): Promise<void> {
  // The SDK's informational worker logs would bury the figures.
  TemporalRuntime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
  const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' };
  const base = loadConfig(env);
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_bench_substrate`;
  const config = loadConfig({ ...env, MONGODB_URI: uri.toString() });
  const runtime = createRuntime(config, 'lethe-bench');
  const suffix = randomUUID().slice(0, 6);
  const tenants: Tenants = {
    ingest: benchName(`ingest-${suffix}`),
    unsealed: benchName(`unsealed-${suffix}`),
    raw: benchName(`raw-${suffix}`),
    lineage: benchName(`lineage-${suffix}`),
    audit: benchName(`audit-${suffix}`),
  };
  const services = createServices(runtime, { taskQueue: benchName(`substrate-${suffix}`) });
  const plainRuntime = unsealedRuntime(runtime);
  const bench: Bench = {
    runtime,
    services,
    unsealed: {
      runtime: plainRuntime,
      services: createServices(plainRuntime, { taskQueue: benchName(`substrate-unsealed-${suffix}`) }),
    },
    suffix,
  };
  const started = performance.now();
  try {
    await runtime.db.dropDatabase();
    await services.ensureIndexes();
    await services.lineage.ensureIndexes();
    console.log(
      `substrate bench — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      `MongoDB ${config.mongo.uri} · Elasticsearch ${config.elasticsearch.url} · Temporal ${config.temporal.address}`,
    );
    const rows: Row[] = [];
    console.log('\n(a) ingest');
    rows.push(...(await benchIngest(bench, tenants)));
    console.log('\n(e) reads by id');
    rows.push(await benchReads(bench, tenants, config));
    console.log('\n(b) lineage closure');
    rows.push(await benchClosure(bench, tenants.lineage));
    console.log('\n(c) audit append');
    rows.push(...(await benchAudit(bench, tenants.audit)));
    console.log('\n(d) hybrid query');
    rows.push(...(await benchSearch(bench, tenants.ingest)));
    printSummary(rows);
  } finally {
    await Promise.allSettled(
      [tenants.ingest, tenants.unsealed, tenants.raw].map((tenant) => services.index.dropTenant(tenant)),
    );
    await runtime.db.dropDatabase().catch(() => undefined);
    await runtime.close();
    console.log(`\n(${fmt((performance.now() - started) / 1000)} s; bench database and indices dropped)`);
  }
}

await runBench(main);
