import type { WriteBatch } from './write-schemas.js';
import type { BatchResult } from './admit-batch.js';
import { DomainError, ErrorType } from '../shared/errors.js';
import type { TenantUsageStore } from '../governance/quotas/tenant-usage-store.js';
import type { Metrics } from '../observability/metrics.port.js';

/** A tenant's quotas: records written per UTC day, and bytes of content stored. */
export interface WriteQuotaLimits {
  writesPerDay: number;
  storedBytes: number;
}

/** What a batch was granted, settled once the write's outcome is known. */
export interface QuotaGrant {
  /** Keeps the bytes of the records stored; gives back those of duplicates. */
  stored(result: Pick<BatchResult, 'events' | 'memories'>): Promise<void>;
  /** Gives back every byte of a write that stored nothing (refused or failed). */
  nothingStored(): Promise<void>;
}

const contentBytes = (r: { content: string }) => Buffer.byteLength(r.content, 'utf8');

/**
 * Per-tenant write quotas, checked before a write is staged. Writes count every record submitted (a refused one
 * too: it cost the work of judging it). Stored bytes count the content of records written through the API, and
 * an erasure gives its records' bytes back (the side-record eraser releases them), so the figure follows what the
 * tenant holds; records derived inside the engine are not counted.
 */
export function createWriteQuota(
  usage: TenantUsageStore,
  limits: WriteQuotaLimits,
  metrics?: Pick<Metrics, 'quotaRefused'>,
) {
  return {
    async admit(tenant: string, batch: WriteBatch, now = new Date()): Promise<QuotaGrant> {
      const records = batch.events.length + batch.memories.length;
      const day = now.toISOString().slice(0, 10);
      if (!(await usage.take(tenant, `writes:${day}`, records, limits.writesPerDay))) {
        metrics?.quotaRefused('writes-per-day');
        throw new DomainError(
          ErrorType.QuotaExceeded,
          `quota: this tenant's ${limits.writesPerDay} writes per day (UTC) are spent; retry tomorrow`,
        );
      }
      const eventBytes = batch.events.map(contentBytes);
      const memoryBytes = batch.memories.map(contentBytes);
      const total = [...eventBytes, ...memoryBytes].reduce((n, b) => n + b, 0);
      if (!(await usage.take(tenant, 'stored-bytes', total, limits.storedBytes))) {
        metrics?.quotaRefused('stored-bytes');
        throw new DomainError(
          ErrorType.StorageQuotaExceeded,
          `quota: this tenant's ${limits.storedBytes} bytes of stored content would be exceeded by this write`,
        );
      }
      return {
        async stored(result) {
          const kept = [
            ...result.events.flatMap((e, i) =>
              e.outcome === 'duplicate' ? [] : [{ id: e.id, bytes: eventBytes[i]! }],
            ),
            ...result.memories.flatMap((m, i) =>
              m.outcome === 'exists' ? [] : [{ id: m.id, bytes: memoryBytes[i]! }],
            ),
          ];
          await usage.recordStored(tenant, kept);
          await usage.giveBack(tenant, 'stored-bytes', total - kept.reduce((n, r) => n + r.bytes, 0));
        },
        async nothingStored() {
          await usage.giveBack(tenant, 'stored-bytes', total);
        },
      };
    },
  };
}

export type WriteQuota = ReturnType<typeof createWriteQuota>;
