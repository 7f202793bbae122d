/**
 * The local stack's PostgreSQL cluster, as a scan of its raw files needs it: a checkpoint so the files hold what
 * a disk image would, where the files are, and a wait for transactions that keep deleted rows alive.
 */
import { execFile } from 'node:child_process';
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

/** Writes every dirty page out, so the data files are what a disk image would hold (retried: a busy cluster may
 * briefly refuse a new connection). */
export async function checkpoint(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sql('CHECKPOINT');
      return;
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

/** Samples every table into the planner's statistics now, as autovacuum would at a moment of its choosing. */
export async function analyze(): Promise<void> {
  await sql('ANALYZE');
}

/** The table a data file belongs to (FerretDB names tables after collections), for failure messages. */
export async function relationOf(file: string): Promise<string> {
  const relfilenode = Number(path.basename(file).split('.')[0]);
  if (!Number.isInteger(relfilenode)) return 'unknown';
  const [name] = await sql(`select relname from pg_class where relfilenode = ${relfilenode}`).catch(() => []);
  return name ?? 'unknown';
}

/**
 * A logical backup of one MongoDB database as an operator takes it: `pg_dump` of the schema FerretDB keeps it in, to
 * a plain SQL file. Returns the file's path.
 */
export async function dumpDatabase(database: string, file: string): Promise<string> {
  const { postgres } = loadStackConfig();
  await execFileAsync('pg_dump', [
    '-h',
    '127.0.0.1',
    '-p',
    String(postgres.port),
    '-U',
    'postgres',
    '-d',
    'ferretdb',
    '-n',
    database,
    '-f',
    file,
  ]);
  return file;
}

/** The cluster's data directory, wherever the stack placed it. */
export async function postgresDataDirectory(): Promise<string> {
  const [dataDir] = await sql(`select current_setting('data_directory')`);
  return dataDir!;
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
