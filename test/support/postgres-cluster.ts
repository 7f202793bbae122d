/**
 * The raw PostgreSQL files behind FerretDB collections of the local stack: each collection's table (every fork and
 * segment), its TOAST table and their indexes, read as bytes from the cluster's data directory. What a scan of
 * these finds is what a copy of the disk would hold, dead row versions included.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadStackConfig } from '../../stack/stack-config.js';

const execFileAsync = promisify(execFile);

async function sql(query: string): Promise<string[]> {
  const { postgres } = loadStackConfig();
  const { stdout } = await execFileAsync('psql', [
    '-h',
    '127.0.0.1',
    '-p',
    String(postgres.port),
    '-U',
    'postgres',
    '-d',
    'ferretdb',
    '-Atc',
    query,
  ]);
  return stdout.split('\n').filter((line) => line.length > 0);
}

const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * Every data file of these collections of the FerretDB database `dbName`, after a checkpoint (so that pages still
 * only in shared buffers are on disk too). A collection that does not exist has none.
 */
export async function tableFilesOf(dbName: string, collections: readonly string[]): Promise<Map<string, string[]>> {
  await sql('CHECKPOINT');
  const [dataDir] = await sql(`select current_setting('data_directory')`);
  const files = new Map<string, string[]>();
  for (const collection of collections) {
    const [table] = await sql(
      `select _jsonb->>'table' from ${dbName}._ferretdb_database_metadata where _jsonb->>'_id' = ${literal(collection)}`,
    );
    if (!table) {
      files.set(collection, []);
      continue;
    }
    const relation = `${dbName}.${table}`;
    const relations = await sql(
      `select pg_relation_filepath(c.oid) from pg_class c where c.oid = ${literal(relation)}::regclass
         or c.oid = (select reltoastrelid from pg_class where oid = ${literal(relation)}::regclass)
         or c.oid in (select indexrelid from pg_index where indrelid = ${literal(relation)}::regclass
           or indrelid = (select reltoastrelid from pg_class where oid = ${literal(relation)}::regclass))`,
    );
    const paths: string[] = [];
    for (const relative of relations) {
      const dir = path.join(dataDir!, path.dirname(relative));
      const base = path.basename(relative);
      // The main fork and its 1 GB segments (`N`, `N.1`, …), the free space and visibility maps (`N_fsm`, `N_vm`).
      for (const name of fs.readdirSync(dir)) {
        if (name === base || name.startsWith(`${base}.`) || name.startsWith(`${base}_`))
          paths.push(path.join(dir, name));
      }
    }
    files.set(collection, paths);
  }
  return files;
}

/**
 * Resolves once no transaction on the FerretDB database began before `since`. VACUUM FULL keeps a row deleted
 * after the oldest open transaction began (that transaction may still read it), so a row deleted just before a
 * compaction goes at the first compaction after those transactions end.
 */
export async function transactionsOlderThanEnded(since: Date, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [open] = await sql(
      `select count(*) from pg_stat_activity where datname = 'ferretdb' and xact_start < ${literal(since.toISOString())}::timestamptz`,
    );
    if (open === '0') return;
    if (Date.now() > deadline) throw new Error(`${open} transactions begun before ${since.toISOString()} still open`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The files (of those given) whose bytes contain the text. */
export function filesContaining(files: readonly string[], text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  return files.filter((file) => fs.readFileSync(file).includes(needle));
}
