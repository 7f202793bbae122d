/** Sample writes for tests: plausible, and different every call where it matters. */
import { randomUUID } from 'node:crypto';
import type { MemoryRecord } from '../../src/substrate/model/records.js';

export function sampleEvent(overrides: Record<string, unknown> = {}) {
  return {
    source: 'crm',
    externalId: `ext-${randomUUID().slice(0, 8)}`,
    namespace: 'support',
    subjects: ['subject-1'],
    content: 'Customer said they moved to Lisbon and prefer e-mail contact.',
    occurredAt: '2026-11-01T10:00:00Z',
    ...overrides,
  };
}

export function sampleMemory(overrides: Record<string, unknown> = {}) {
  return {
    namespace: 'support',
    subjects: ['subject-1'],
    kind: 'preference',
    attribute: 'contact-channel',
    content: 'Prefers e-mail contact.',
    validFrom: '2026-11-01T10:00:00Z',
    purpose: 'customer-support',
    sensitivity: 'internal',
    jurisdiction: 'PT',
    trustTier: 1,
    confidence: 0.9,
    provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-preference' },
    ...overrides,
  };
}

/** A stored memory record as the index sees it (for tests of the index adapter itself). */
export function memoryRecord(
  tenant: string,
  id: string,
  content: string,
  overrides: Partial<MemoryRecord> = {},
): MemoryRecord {
  const at = new Date('2025-01-01T00:00:00.000Z');
  return {
    _id: id,
    tenant,
    namespace: 'crm',
    subjects: ['subj-1'],
    kind: 'fact',
    attribute: null,
    content,
    contentHash: `hash-${id}`,
    validFrom: at,
    validTo: null,
    recordedAt: at,
    policy: { purpose: 'support', sensitivity: 'internal', jurisdiction: 'EU', retentionClass: 'standard' },
    provenance: { eventIds: [], parentIds: [], derivationRule: 'direct', modelVersion: null, promptVersion: null },
    trustTier: 2,
    confidence: 0.9,
    version: 1,
    status: 'active',
    writtenBy: 'agent-1',
    expiresAt: null,
    highImpact: false,
    statusReason: null,
    updatedAt: at,
    ...overrides,
  };
}
