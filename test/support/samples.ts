/** Sample writes for tests: plausible, and different every call where it matters. */
import { randomUUID } from 'node:crypto';

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
