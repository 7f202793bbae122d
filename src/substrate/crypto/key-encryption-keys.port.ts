import { DomainError, ErrorType } from '../../shared/errors.js';

/**
 * Key-encryption keys (KEKs), in epochs: data keys are stored wrapped under the epoch that was current when they
 * were made, or re-wrapped under a later one by a rotation. Destroying an epoch makes every copy of a data key wrapped
 * under it — in the write-ahead log, in a replica, in a backup — unreadable: that is how a data key deleted from the
 * vault also dies in the copies the vault's own storage keeps.
 */
export interface KekEpoch {
  epoch: number;
  createdAt: Date;
  /** When its key material was destroyed, or made unusable for good; null while it can still unwrap. */
  destroyedAt: Date | null;
  /**
   * Where a KMS keeps disabled material for a waiting period before deleting it (AWS KMS: 7–30 days, cancellable only
   * by a KMS administrator): the date the material is gone from the KMS itself.
   */
  materialDeletedBy?: Date;
}

/** An epoch whose key material is destroyed (or was never known here): what it wrapped cannot be unwrapped. */
export class KekEpochGone extends Error {
  constructor(readonly epoch: number) {
    super(`key-encryption key epoch ${epoch} is destroyed or unknown`);
    this.name = 'KekEpochGone';
  }
}

/**
 * The key service did not answer (unreachable, timed out, throttled after the client's own retries, or failed on its
 * side): nothing was wrapped, unwrapped or destroyed, and the same call may succeed later. It names the service and
 * the cause's code, never a key or a context.
 */
export class KekUnavailable extends DomainError {
  constructor(
    readonly service: string,
    readonly reason: string,
  ) {
    super(ErrorType.Unavailable, `the key service (${service}) is unavailable (${reason}); retry later`, 'kms');
  }
}

export interface KeyEncryptionKeys {
  /** Which service holds the KEKs (`local-file`, …): named in certificates, never a key. */
  readonly kind: string;
  /** Wraps a data key under the current epoch; `context` is bound to it (additional data) and must match on unwrap. */
  wrap(dataKey: Buffer, context: string): Promise<{ epoch: number; wrapped: string }>;
  /** Throws KekEpochGone when the epoch is destroyed or unknown. */
  unwrap(epoch: number, wrapped: string, context: string): Promise<Buffer>;
  /** The epochs known, oldest first. */
  epochs(): Promise<KekEpoch[]>;
  /** Starts a new epoch, current from now on; returns it. */
  beginEpoch(): Promise<number>;
  /** Destroys an epoch's key material for good (idempotent). Refuses the current epoch. */
  destroyEpoch(epoch: number): Promise<void>;
}
