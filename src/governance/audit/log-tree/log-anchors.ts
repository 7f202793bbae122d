/**
 * Anchors for the entries that record signed documents (certificates, receipts, access packages): a checkpoint
 * covering the entry, published at once if none does yet, and the entry's inclusion proof in that checkpoint's tree.
 * Safe to repeat: a retry finds the checkpoint already signed (or a later one) and proves the same leaf in it.
 */
import type { AuditEntry, AuditLog } from '../audit-log.port.js';
import type { CheckpointStore, SignedCheckpoint } from './checkpoint-store.js';
import { logAnchor, type LogAnchor } from './log-anchor.js';
import type { LogTree } from './log-tree-store.js';

export interface LogAnchors {
  /** Publishes a checkpoint covering the entry unless the latest does, and proves the entry in it. Needs the signing key. */
  anchor(entry: AuditEntry): Promise<LogAnchor>;
  /** The entry's anchor under the latest published checkpoint, without signing; null while none covers it. */
  latest(entry: AuditEntry): Promise<LogAnchor | null>;
  /** As `anchor`, for the entry of `seq` read from the log; null when the log has no such entry. */
  anchorAt(tenant: string, seq: number): Promise<LogAnchor | null>;
  /** As `latest`, for the entry of `seq` read from the log; null when the log has no such entry. */
  latestAt(tenant: string, seq: number): Promise<LogAnchor | null>;
}

export function createLogAnchors(deps: {
  audit: Pick<AuditLog, 'entries'>;
  checkpoints: Pick<CheckpointStore, 'publish' | 'latest'>;
  tree: Pick<LogTree, 'inclusion'>;
}): LogAnchors {
  const prove = async (entry: AuditEntry, checkpoint: SignedCheckpoint): Promise<LogAnchor> =>
    logAnchor(entry, checkpoint.note, await deps.tree.inclusion(entry.tenant, entry.seq - 1, checkpoint.size));

  const latest = async (entry: AuditEntry) => {
    const checkpoint = await deps.checkpoints.latest(entry.tenant);
    return checkpoint && checkpoint.size >= entry.seq ? prove(entry, checkpoint) : null;
  };

  const anchor = async (entry: AuditEntry) => {
    // The entry is appended, so the chain's head is at or after it and the checkpoint published covers it.
    const checkpoint = await deps.checkpoints.publish(entry.tenant);
    if (!checkpoint || checkpoint.size < entry.seq)
      throw new Error(`audit checkpoint of ${entry.tenant}: does not reach seq ${entry.seq}`);
    return prove(entry, checkpoint);
  };

  const entryAt = async (tenant: string, seq: number): Promise<AuditEntry | null> => {
    for await (const entry of deps.audit.entries(tenant, { fromSeq: seq, toSeq: seq })) return entry;
    return null;
  };

  return {
    anchor,
    latest,
    async anchorAt(tenant, seq) {
      const entry = await entryAt(tenant, seq);
      return entry ? anchor(entry) : null;
    },
    async latestAt(tenant, seq) {
      const entry = await entryAt(tenant, seq);
      return entry ? latest(entry) : null;
    },
  };
}
