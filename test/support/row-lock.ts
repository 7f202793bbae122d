/**
 * Holds one document's row lock inside the PostgreSQL under FerretDB, from a `psql` session of its own, so that a
 * test can queue real writes of that document in a known order. FerretDB updates a document by reading it, then
 * writing the whole document back by `_id`; a write queued here has done its read, and when the lock goes the
 * writes land one after the other, in the order they queued (PostgreSQL's tuple lock queue).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { loadStackConfig } from '../../stack/stack-config.js';

const PSQL = '/usr/lib/postgresql/15/bin/psql';

export interface RowLock {
  /** Resolves once `n` writes of the document are waiting for the lock. */
  waiters(n: number): Promise<void>;
  /** Lets the queued writes through and ends the session. */
  release(): Promise<void>;
}

/** A `psql` session: each call sends SQL and resolves with its output lines once a marker after it comes back. */
function session(): { run(sql: string): Promise<string[]>; end(): Promise<void> } {
  const stack = loadStackConfig();
  const child: ChildProcessWithoutNullStreams = spawn(
    'runuser',
    [
      '-u',
      'postgres',
      '--',
      PSQL,
      '-At',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      '127.0.0.1',
      '-p',
      String(stack.postgres.port),
    ].concat(['-d', 'ferretdb']),
    { cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  let exited: number | null = null;
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  child.stdout.on('data', (d: Buffer) => ((out += d.toString()), notify()));
  child.stderr.on('data', (d: Buffer) => ((err += d.toString()), notify()));
  child.on('exit', (code) => ((exited = code ?? -1), notify()));
  let seq = 0;
  return {
    run(sql) {
      const marker = `@@row-lock-${++seq}`;
      child.stdin.write(`${sql}\n\\echo ${marker}\n`);
      return new Promise((resolve, reject) => {
        const check = () => {
          const at = out.indexOf(`${marker}\n`);
          if (at >= 0) {
            listeners.delete(check);
            const lines = out.slice(0, at).split('\n').filter(Boolean);
            out = out.slice(at + marker.length + 1);
            resolve(lines);
          } else if (exited !== null) {
            listeners.delete(check);
            reject(new Error(`psql exited ${exited}: ${err.trim()}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
    end() {
      if (exited !== null) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.stdin.end();
      });
    },
  };
}

/** Locks the row of document `id` of collection `collection` in database `dbName` until `release`. */
export async function lockRow(dbName: string, collection: string, id: string): Promise<RowLock> {
  const psql = session();
  const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
  const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
  try {
    const [table] = await psql.run(
      `SELECT _jsonb->>'table' FROM ${ident(dbName)}._ferretdb_database_metadata WHERE _jsonb->>'_id' = ${literal(collection)};`,
    );
    if (!table) throw new Error(`collection ${collection}: no table in ${dbName}`);
    const relation = `${ident(dbName)}.${ident(table)}`;
    await psql.run('BEGIN;');
    const located = await psql.run(
      `SELECT (ctid::text::point)[0]::int || ' ' || (ctid::text::point)[1]::int FROM ${relation}
        WHERE _jsonb->>'_id' = ${literal(id)} FOR UPDATE;`,
    );
    if (located.length !== 1) throw new Error(`document ${id}: no row to lock`);
    const [page, tuple] = located[0]!.split(' ');
    // The first waiter waits for this transaction (holding the row's tuple lock); the others for the tuple lock.
    const waiting = `SELECT count(*) FROM pg_locks WHERE NOT granted AND (
      (locktype = 'transactionid' AND transactionid = pg_current_xact_id()::text::xid)
      OR (locktype = 'tuple' AND relation = ${literal(relation)}::regclass AND page = ${page} AND tuple = ${tuple}));`;
    return {
      async waiters(n) {
        for (;;) {
          const [count] = await psql.run(waiting);
          if (Number(count) >= n) return;
          await new Promise((r) => setTimeout(r, 20));
        }
      },
      async release() {
        await psql.run('COMMIT;');
        await psql.end();
      },
    };
  } catch (error) {
    await psql.end();
    throw error;
  }
}
