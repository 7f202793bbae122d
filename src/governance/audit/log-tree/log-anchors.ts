/**
 * Anchors for the entries that record signed documents (certificates, receipts, access packages): a checkpoint
 * covering the entry, published at once if none does yet, and the entry's inclusion proof in that checkpoint's tree.
 * Safe to repeat: a retry finds the checkpoint already signed (or a later one) and proves the same leaf in it.
 */
import type { AuditEntry, AuditLog } from '../audit-log.port.js';
import type { CheckpointStore, SignedCheckpoint } from './checkpoint-store.js';
import { checkpointSizeOf, logAnchor, type LogAnchor } from './log-anchor.js';
import { withCosignatures } from '../witness/cosignature.js';
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
  /**
   * The anchor with witnesses' cosignatures, as lines under the log's own signature (a C2SP cosigned checkpoint): its
   * own checkpoint's if it has any, else proven again under the latest checkpoint if that one is cosigned; the anchor
   * as it is when neither is.
   */
  cosigned(anchor: LogAnchor): Promise<LogAnchor>;
}

const hasCosignatures = (checkpoint: SignedCheckpoint) => Object.keys(checkpoint.cosignatures ?? {}).length > 0;

function withCosignaturesOf(anchor: LogAnchor, checkpoint: SignedCheckpoint): LogAnchor {
  return { ...anchor, checkpoint: withCosignatures(checkpoint.note, Object.values(checkpoint.cosignatures ?? {})) };
}

export function createLogAnchors(deps: {
  audit: Pick<AuditLog, 'entries'>;
  checkpoints: Pick<CheckpointStore, 'publish' | 'latest' | 'atSize'>;
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
    async cosigned(anchor) {
      const tenant = anchor.entry.tenant;
      const size = checkpointSizeOf(anchor.checkpoint);
      const own = size === null ? null : await deps.checkpoints.atSize(tenant, size);
      // Only under the very note the log signed: the witnesses cosigned those bytes, and no others.
      if (own && own.note === anchor.checkpoint && hasCosignatures(own)) return withCosignaturesOf(anchor, own);
      // A checkpoint signed as a document was issued is not the one the witnesses were sent (that is the worker's
      // next): the entry is proven again under the latest checkpoint, if it is cosigned.
      const latest = await deps.checkpoints.latest(tenant);
      if (!latest || !hasCosignatures(latest) || latest.size < anchor.entry.seq) return anchor;
      return withCosignaturesOf(await prove(anchor.entry, latest), latest);
    },
  };
}
