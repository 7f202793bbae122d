/** An active memory record as the index takes it, for benchmarks that exercise the index alone. */
import { createHash } from 'node:crypto';
import type { MemoryRecord } from '../../src/substrate/model/records.js';

export function memoryRecordFor(tenant: string, id: string, content: string, subjects: string[]): MemoryRecord {
  const at = new Date('2026-01-01T00:00:00.000Z');
  return {
    _id: id,
    tenant,
    namespace: 'crm',
    subjects,
    kind: 'fact',
    attribute: null,
    content,
    contentHash: createHash('sha256').update(content).digest('hex'),
    validFrom: at,
    validTo: null,
    recordedAt: at,
    policy: { purpose: 'support', sensitivity: 'internal', jurisdiction: 'EU', retentionClass: 'standard' },
    provenance: { eventIds: [], parentIds: [], derivationRule: 'bench', modelVersion: null, promptVersion: null },
    trustTier: 2,
    confidence: 0.9,
    version: 1,
    status: 'active',
    writtenBy: 'bench',
    expiresAt: null,
    highImpact: false,
    statusReason: null,
    updatedAt: at,
    scope: 'tenant',
  };
}
