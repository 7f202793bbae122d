/**
 * MongoDB part of `bench/stack.bench.ts`: insertMany rate and 100-parallel `_id` / indexed-equality lookups on
 * FerretDB over PostgreSQL, on a collection that keeps the GIN companion indexes the stack's event trigger adds
 * (stack/postgres/bootstrap.sql) and on one whose companions were dropped through psql.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Db, ObjectId } from 'mongodb';
import { median, percentile, timed } from './stack-report.js';

const execFileAsync = promisify(execFile);
const PSQL = '/usr/lib/postgresql/15/bin/psql';
const PG_DATABASE = 'ferretdb';
/** Documents per subject: an equality lookup on `subjectId` returns this many. */
const PER_SUBJECT = 5;
/** Documents of one block, across which a block's subjects are spread. */
const BLOCK = 10_000;
const INSERT_BATCH = 10_000;

export interface MongoPlan {
  sizes: number[];
  parallel: number;
  rounds: number;
  sequential: number;
}

export interface LookupFigures {
  /** Wall time of `parallel` lookups started at once, median over rounds, ms. */
  parallelMs: number;
  /** Latency of one lookup, p50 over `sequential` lookups made one after another, ms. */
  singleP50: number;
}

export interface MongoFigures {
  size: number;
  /** Documents inserted to reach `size` from the previous size, and the rate. */
  inserted: number;
  insertRate: number;
  byId: LookupFigures;
  byField: LookupFigures;
}

export interface Variant {
  label: string;
  gin: boolean;
  collection: string;
  /** The PostgreSQL table FerretDB created, and the GIN indexes on it after set-up. */
  table: string;
  ginIndexes: string[];
  btreeIndexes: number;
  ids: ObjectId[];
  results: MongoFigures[];
}

function identifier(name: string): string {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unexpected PostgreSQL identifier "${name}"`);
  return `"${name}"`;
}

export async function psql(pgPort: number, sql: string): Promise<string[]> {
  const { stdout } = await execFileAsync(
    PSQL,
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(pgPort),
      '-U',
      'postgres',
      '-d',
      PG_DATABASE,
      '-X',
      '-q',
      '-tA',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      sql,
    ],
    { env: { ...process.env, PGCONNECT_TIMEOUT: '5' } },
  );
  return stdout.split('\n').filter((line) => line.length > 0);
}

/** `plan_cache_mode` as set on FerretDB's database (stack/postgres/bootstrap.sh sets force_custom_plan). */
export async function planCacheMode(pgPort: number): Promise<string> {
  const rows = await psql(
    pgPort,
    `SELECT s FROM pg_db_role_setting r JOIN pg_database d ON d.oid = r.setdatabase, unnest(r.setconfig) s
      WHERE d.datname = '${PG_DATABASE}' AND r.setrole = 0 AND s LIKE 'plan_cache_mode=%'`,
  );
  return rows[0]?.split('=')[1] ?? '(not set)';
}

/** FerretDB maps a database to a schema and a collection to a table listed in the schema's metadata table. */
async function tableOf(pgPort: number, database: string, collection: string): Promise<string> {
  const rows = await psql(
    pgPort,
    `SELECT _jsonb->>'table' FROM ${identifier(database)}._ferretdb_database_metadata WHERE _jsonb->>'_id' = '${collection}'`,
  );
  if (rows.length !== 1) throw new Error(`no FerretDB table for ${database}.${collection}`);
  return rows[0]!;
}

async function indexesOf(pgPort: number, schema: string, table: string): Promise<{ gin: string[]; btree: number }> {
  const rows = await psql(
    pgPort,
    `SELECT am.amname, c.relname FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
      WHERE i.indrelid = to_regclass('${identifier(schema)}.${identifier(table)}')`,
  );
  const split = rows.map((r) => r.split('|') as [string, string]);
  return {
    gin: split.filter(([am]) => am === 'gin').map(([, name]) => name),
    btree: split.filter(([am]) => am === 'btree').length,
  };
}

/** Creates the collection and its MongoDB indexes; without GIN, drops the companions the trigger just added. */
export async function prepareVariant(
  db: Db,
  pgPort: number,
  label: string,
  gin: boolean,
  collection: string,
): Promise<Variant> {
  const coll = await db.createCollection(collection);
  await coll.createIndex({ subjectId: 1 }, { name: 'subjectId_1' });
  await coll.createIndex({ tenant: 1, externalId: 1 }, { name: 'tenant_externalId_1', unique: true });
  const table = await tableOf(pgPort, db.databaseName, collection);
  let indexes = await indexesOf(pgPort, db.databaseName, table);
  if (gin && indexes.gin.length === 0) {
    throw new Error(
      `no GIN companion index on ${db.databaseName}.${table}: is the event trigger of stack/postgres/bootstrap.sql installed?`,
    );
  }
  if (!gin) {
    for (const name of indexes.gin) await psql(pgPort, `DROP INDEX ${identifier(db.databaseName)}.${identifier(name)}`);
    indexes = await indexesOf(pgPort, db.databaseName, table);
    if (indexes.gin.length > 0) throw new Error(`GIN indexes left on ${table}: ${indexes.gin.join(', ')}`);
  }
  return { label, gin, collection, table, ginIndexes: indexes.gin, btreeIndexes: indexes.btree, ids: [], results: [] };
}

interface BenchDoc {
  _id?: ObjectId;
  subjectId: string;
  tenant: string;
  externalId: string;
  kind: string;
  seq: number;
  content: string;
  createdAt: Date;
}

function subjectOf(i: number): string {
  const perBlock = BLOCK / PER_SUBJECT;
  return `subj-${Math.floor(i / BLOCK) * perBlock + (i % perBlock)}`;
}

function doc(i: number, createdAt: Date): BenchDoc {
  return {
    subjectId: subjectOf(i),
    tenant: `t${i % 10}`,
    externalId: `ext-${i}`,
    kind: `k${i % 17}`,
    seq: i,
    content: `memory ${i}: ${'the customer asked about the invoice and the delivery date '.repeat(2)}`,
    createdAt,
  };
}

/** Untimed inserts and lookups in a scratch collection: JIT, driver pool, FerretDB's and PostgreSQL's caches. */
export async function warmUp(db: Db, plan: MongoPlan): Promise<void> {
  const coll = db.collection<BenchDoc>('warmup');
  const createdAt = new Date();
  await coll.insertMany(
    Array.from({ length: 2000 }, (_, i) => doc(i, createdAt)),
    { ordered: false },
  );
  await Promise.all(Array.from({ length: plan.parallel }, (_, i) => coll.findOne({ subjectId: subjectOf(i) })));
  await coll.drop();
}

/**
 * Grows every variant's collection to `size`, one batch of each in turn (order swapped every batch), so that the
 * insert rates compare under the same machine load.
 */
async function growAll(
  db: Db,
  variants: readonly Variant[],
  size: number,
): Promise<Map<Variant, { inserted: number; rate: number }>> {
  const createdAt = new Date();
  const spent = new Map(variants.map((v) => [v, { from: v.ids.length, ms: 0 }]));
  for (let turn = 0; variants.some((v) => v.ids.length < size); turn++) {
    const order = turn % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      const start = variant.ids.length;
      if (start >= size) continue;
      const batch = Array.from({ length: Math.min(INSERT_BATCH, size - start) }, (_, k) => doc(start + k, createdAt));
      const t = await timed(() => db.collection<BenchDoc>(variant.collection).insertMany(batch, { ordered: false }));
      if (t.value.insertedCount !== batch.length)
        throw new Error(`inserted ${t.value.insertedCount} of ${batch.length}`);
      spent.get(variant)!.ms += t.ms;
      for (const d of batch) variant.ids.push(d._id!);
    }
  }
  return new Map(
    variants.map((v) => {
      const { from, ms } = spent.get(v)!;
      return [v, { inserted: size - from, rate: ((size - from) / ms) * 1000 }];
    }),
  );
}

type Lookup = () => Promise<number>;

/** `parallel` lookups started at once; returns the wall time. */
async function parallelRound(lookups: Lookup[]): Promise<number> {
  const { ms, value } = await timed(() => Promise.all(lookups.map((l) => l())));
  if (value.some((found) => found === 0)) throw new Error('a lookup found nothing');
  return ms;
}

/**
 * Grows the variants to `size`, then measures their lookups with rounds interleaved across variants (order
 * swapped every round): `rounds` × `parallel` lookups at once, then `sequential` lookups one at a time.
 */
export async function measureAt(
  db: Db,
  variants: readonly Variant[],
  size: number,
  plan: MongoPlan,
  random: () => number,
): Promise<void> {
  const inserts = await growAll(db, variants, size);
  const byIdLookup = (v: Variant): Lookup => {
    const id = v.ids[Math.floor(random() * v.ids.length)]!;
    const coll = db.collection<BenchDoc>(v.collection);
    return async () => ((await coll.findOne({ _id: id })) ? 1 : 0);
  };
  const byFieldLookup = (v: Variant): Lookup => {
    const subjectId = subjectOf(Math.floor(random() * size));
    const coll = db.collection<BenchDoc>(v.collection);
    return async () => {
      const found = await coll.find({ subjectId }).toArray();
      if (found.length !== PER_SUBJECT)
        throw new Error(`subject ${subjectId}: ${found.length} documents, expected ${PER_SUBJECT}`);
      return found.length;
    };
  };
  const times = new Map(
    variants.map((v) => [
      v,
      { id: [] as number[], field: [] as number[], idOne: [] as number[], fieldOne: [] as number[] },
    ]),
  );
  for (const v of variants) {
    // Opens the driver's pool (and FerretDB's PostgreSQL connections) for this collection before anything is timed.
    await parallelRound(Array.from({ length: plan.parallel }, () => byIdLookup(v)));
  }
  for (let round = 0; round < plan.rounds; round++) {
    for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
      const t = times.get(v)!;
      t.id.push(await parallelRound(Array.from({ length: plan.parallel }, () => byIdLookup(v))));
      t.field.push(await parallelRound(Array.from({ length: plan.parallel }, () => byFieldLookup(v))));
    }
  }
  for (let i = 0; i < plan.sequential; i++) {
    for (const v of i % 2 === 0 ? variants : [...variants].reverse()) {
      const t = times.get(v)!;
      t.idOne.push(await parallelRound([byIdLookup(v)]));
      t.fieldOne.push(await parallelRound([byFieldLookup(v)]));
    }
  }
  for (const v of variants) {
    const t = times.get(v)!;
    const insert = inserts.get(v)!;
    v.results.push({
      size,
      inserted: insert.inserted,
      insertRate: insert.rate,
      byId: { parallelMs: median(t.id), singleP50: percentile(t.idOne, 50) },
      byField: { parallelMs: median(t.field), singleP50: percentile(t.fieldOne, 50) },
    });
  }
}
