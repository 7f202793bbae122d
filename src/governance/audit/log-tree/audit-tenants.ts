/**
 * The tenants with an audit log, and the largest size of each one's published checkpoint: what the checkpoint
 * publisher visits, and where a reader finds the latest checkpoint with one `_id` lookup (a sort is slow on FerretDB).
 * The audit log registers a tenant at its first append in each process; registering again changes nothing.
 */
import type { Collection, Db, UpdateFilter } from 'mongodb';
import { Collections, isDuplicateKey } from '../../../substrate/mongo/collections.js';

export interface AuditTenantDoc {
  _id: string;
  tenant: string;
  since: Date;
  /** The largest size published. */
  checkpointSize?: number;
}

export function auditTenants(db: Db): Collection<AuditTenantDoc> {
  return db.collection<AuditTenantDoc>(Collections.auditTenants);
}

export async function registerAuditTenant(tenants: Collection<AuditTenantDoc>, tenant: string): Promise<void> {
  await upsert(tenants, tenant, { $setOnInsert: { since: new Date() } });
}

/** Records that a checkpoint of `size` was published; a smaller size recorded later changes nothing. */
export async function recordCheckpointSize(
  tenants: Collection<AuditTenantDoc>,
  tenant: string,
  size: number,
): Promise<void> {
  await upsert(tenants, tenant, { $max: { checkpointSize: size }, $setOnInsert: { since: new Date() } });
}

/**
 * Two upserts of one new tenant at once may both try the insert (MongoDB's documented race): the loser's duplicate
 * key means the document now exists, and its update is applied to it.
 */
async function upsert(
  tenants: Collection<AuditTenantDoc>,
  tenant: string,
  update: UpdateFilter<AuditTenantDoc>,
): Promise<void> {
  try {
    await tenants.updateOne({ _id: tenant, tenant }, update, { upsert: true });
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    await tenants.updateOne({ _id: tenant, tenant }, update);
  }
}
