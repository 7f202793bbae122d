/**
 * Whether a `VACUUM FULL` can drop a deleted row: PostgreSQL keeps every row version that some open snapshot may
 * still see, and rewrites it into the new table. So a compaction proves the erased rows gone only if no snapshot
 * older than their deletion was open while it ran: a transaction of another session (`backend_xmin`), a prepared
 * transaction, or a replication slot holding the horizon back. This reads those from the PostgreSQL under FerretDB,
 * on a connection of its own (FerretDB does not expose them), and reports times by PostgreSQL's own clock.
 */
import pg from 'pg';

/** What holds the horizon back. No query text, user or address: only its kind and since when. */
export interface OpenSnapshot {
  kind: 'transaction' | 'prepared' | 'replication-slot';
  /** When the holder began (a slot has no start time: null). */
  since: Date | null;
}

export interface SnapshotHorizon {
  /** PostgreSQL's clock: compared with the holders' start times, never with this process's clock. */
  now(): Promise<Date>;
  /** The oldest holder of a snapshot begun before `before` (a slot always counts); null when there is none. */
  olderThan(before: Date): Promise<OpenSnapshot | null>;
  close(): Promise<void>;
}

const OLDER_THAN = `
  select 'transaction' as kind, min(xact_start) as since from pg_stat_activity
    where backend_xmin is not null and pid <> pg_backend_pid() and datname = current_database() and xact_start < $1
  union all
  select 'prepared', min(prepared) from pg_prepared_xacts where database = current_database() and prepared < $1
  union all
  select 'replication-slot', null from pg_replication_slots where xmin is not null or catalog_xmin is not null`;

export function createPostgresSnapshotHorizon(url: string): SnapshotHorizon {
  // One connection is enough: the compaction asks a few times a second at most.
  // A paused or restarting server fails the call within seconds, so the compaction's attempt fails and is retried
  // rather than waiting out its start-to-close.
  const pool = new pg.Pool({
    connectionString: url,
    max: 1,
    idleTimeoutMillis: 10_000,
    connectionTimeoutMillis: 5000,
    query_timeout: 10_000,
  });
  // A connection the server closed while idle (a restart) is dropped from the pool; the next call opens another.
  pool.on('error', () => undefined);
  return {
    async now() {
      const { rows } = await pool.query<{ now: Date }>('select now() as now');
      return rows[0]!.now;
    },
    async olderThan(before) {
      const { rows } = await pool.query<{ kind: OpenSnapshot['kind']; since: Date | null }>(OLDER_THAN, [before]);
      const held = rows.filter((r) => r.kind === 'replication-slot' || r.since !== null);
      if (held.length === 0) return null;
      // A slot first (it has no end in sight), then the oldest start.
      return held.sort((a, b) => (a.since?.getTime() ?? 0) - (b.since?.getTime() ?? 0))[0]!;
    },
    async close() {
      await pool.end();
    },
  };
}
