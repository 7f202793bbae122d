import type { Db } from 'mongodb';
import { compactCollections } from '../mongo/compaction.js';
import type { OpenSnapshot, SnapshotHorizon } from './snapshot-horizon.js';

/** What a compaction can claim of the rows it was to drop. */
export interface CompactionProof {
  /** Whether the snapshot horizon was read (the PostgreSQL under FerretDB reachable: `LETHE_POSTGRES_URL`). */
  checked: boolean;
  /** How long the compaction waited for older snapshots to close, in ms. */
  waitedMs?: number;
  /** A holder still open when the wait ran out: `VACUUM FULL` kept the row versions it may see. Since: ISO 8601. */
  heldBy?: { kind: OpenSnapshot['kind']; since: string | null };
}

export interface ProvedCompactionOptions {
  /** The longest the compaction waits for snapshots older than its start to close. */
  waitMs: number;
  pollMs: number;
}

export const DEFAULT_PROVED_COMPACTION: ProvedCompactionOptions = { waitMs: 60_000, pollMs: 500 };

/**
 * Compacts once no snapshot older than this call is open, or once the wait runs out, and says which. The rows to
 * drop were deleted before the call (the purge has committed), so a snapshot begun after its start cannot see
 * them: only older ones can keep them, and none can begin later. Without a horizon to read, it compacts and says
 * it could not check.
 */
export async function compactProved(
  db: Db,
  names: readonly string[],
  horizon: SnapshotHorizon | undefined,
  options: ProvedCompactionOptions = DEFAULT_PROVED_COMPACTION,
): Promise<{ compacted: string[]; proof: CompactionProof }> {
  if (!horizon) return { compacted: await compactCollections(db, names), proof: { checked: false } };
  const start = await horizon.now();
  const began = Date.now();
  let held = await horizon.olderThan(start);
  while (held && Date.now() - began < options.waitMs) {
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    held = await horizon.olderThan(start);
  }
  const waitedMs = Date.now() - began;
  const compacted = await compactCollections(db, names);
  return {
    compacted,
    proof: {
      checked: true,
      waitedMs,
      ...(held ? { heldBy: { kind: held.kind, since: held.since?.toISOString() ?? null } } : {}),
    },
  };
}
