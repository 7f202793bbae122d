/**
 * The retention sweep's activities wired to the worker's services: the expiry queue and sweep state over the worker's
 * database, and the erasure gateway the sweep files its requests through.
 */
import type { Db } from 'mongodb';
import type { RetentionActivityDeps, RetentionErasurePort } from '../../activities/retention.activities.js';
import type { AuditLog } from '../../src/governance/audit/audit-log.port.js';
import type { ErasureRequestStore } from '../../src/governance/erasure/erasure-request-store.js';
import type { ErasureState } from '../../src/governance/erasure/erasure-request.js';
import { createExpiryQueue } from '../../src/governance/retention/expiry-queue.js';
import { createMongoSweepStateStore } from '../../src/governance/retention/sweep-state-store.js';
import type { ContentCipher } from '../../src/substrate/crypto/content-cipher.js';
import type { ErasureGateway } from '../../src/temporal/erasure-gateway.js';
import { RETENTION_SWEEP_PRINCIPAL } from '../../src/temporal/retention-schedule.js';

/** Erasure states that count as "at work" for the sweep's back-pressure (`partial` waits on a hold, not on us). */
const AT_WORK: readonly ErasureState[] = ['received', 'running', 'needs-operator'];

/** The sweep's way into the erasure workflow: the gateway, as the system principal, on ground retention-expiry. */
export function retentionErasurePort(erasures: ErasureGateway, requests: ErasureRequestStore): RetentionErasurePort {
  return {
    async file(tenant, memoryIds) {
      const principal = { id: RETENTION_SWEEP_PRINCIPAL, tenant, roles: ['system'] as never };
      const { request } = await erasures.file(principal, { selector: { memoryIds }, legalGround: 'retention-expiry' });
      return { requestId: request._id };
    },
    async open(tenant) {
      const ids = await Promise.all(AT_WORK.map((state) => requests.idsInState(tenant, state)));
      return ids.reduce((n, list) => n + list.length, 0);
    },
  };
}

/** Everything `createRetentionActivities` needs, from the worker's services (one line in `activities.ts`). */
export function retentionActivityDeps(
  db: Db,
  cipher: ContentCipher,
  services: { audit: AuditLog; workflows: { erasure: ErasureGateway }; erasureRequests: ErasureRequestStore },
): RetentionActivityDeps {
  return {
    queue: createExpiryQueue(db, cipher),
    sweeps: createMongoSweepStateStore(db),
    audit: services.audit,
    erasures: retentionErasurePort(services.workflows.erasure, services.erasureRequests),
  };
}
