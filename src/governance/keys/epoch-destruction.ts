/**
 * What a tenant's auditor reads after a KEK rotation: a certificate dates its copies' lapse from the rotation
 * schedule, and this entry in the tenant's own audit chain says the epoch was in fact destroyed, and when. Only
 * tenants with an erasure whose copies waited on the epoch are told; the entry carries the epoch, its destruction
 * time (from the keyring, not this process's clock) and a count of requests, never an id of a record.
 */
import type { AuditLog } from '../audit/audit-log.port.js';
import type { ErasureRequestStore } from '../erasure/erasure-request-store.js';
import type { KeyEncryptionKeys } from '../../substrate/crypto/key-encryption-keys.port.js';

export const EPOCH_DESTROYED_ACTION = 'kek.epoch-destroyed';

export interface EpochDestructionDeps {
  requests: Pick<ErasureRequestStore, 'awaitingEpoch'>;
  audit: Pick<AuditLog, 'append'>;
  keks: Pick<KeyEncryptionKeys, 'epochs'>;
}

/** Appends one entry per (tenant, destroyed epoch); idempotent by epoch, so a retried run appends nothing new. */
export async function recordDestroyedEpochs(
  deps: EpochDestructionDeps,
  destroyed: readonly number[],
  actor: string,
): Promise<number> {
  if (destroyed.length === 0) return 0;
  const dates = new Map((await deps.keks.epochs()).map((e) => [e.epoch, e.destroyedAt]));
  let appended = 0;
  for (const epoch of destroyed) {
    const at = dates.get(epoch);
    // Only what the keyring says was destroyed is recorded as destroyed.
    if (!at) continue;
    for (const { tenant, requests } of await deps.requests.awaitingEpoch(epoch)) {
      await deps.audit.append({
        tenant,
        actor,
        action: EPOCH_DESTROYED_ACTION,
        target: `kek-epoch-${epoch}`,
        outcome: 'ok',
        details: { epoch, destroyedAt: at.toISOString(), requests },
        idempotencyKey: `${EPOCH_DESTROYED_ACTION}:${epoch}`,
      });
      appended += 1;
    }
  }
  return appended;
}
