/** Sample writes for tests: plausible, and different every call where it matters. */
import { randomUUID } from 'node:crypto';
import type { EventRecord, MemoryRecord } from '../../src/substrate/model/records.js';

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

/**
 * A stored event as the read judge sees it: the fields it judges (tenant, subjects, sensitivity, owner scope, live),
 * nothing else (for tests of the judge itself).
 */
export function judgedEvent(tenant: string, id: string, overrides: Partial<EventRecord> = {}): EventRecord {
  return {
    _id: id,
    tenant,
    subjects: ['subj-1'],
    sensitivity: 'internal',
    scope: 'tenant',
    deleted: false,
    ...overrides,
  } as EventRecord;
}

/** A word for a small number: fixtures that vary a number across records of one subject say it in words (the
 * derivation audit reads differing quantities about one subject in its history as ambiguous). */
export function ordinalWord(i: number): string {
  const words = [
    'alpha',
    'bravo',
    'charlie',
    'delta',
    'echo',
    'foxtrot',
    'golf',
    'hotel',
    'india',
    'juliet',
    'kilo',
    'lima',
    'mike',
    'november',
    'oscar',
    'papa',
    'quebec',
    'romeo',
    'sierra',
    'tango',
  ];
  return i < words.length
    ? words[i]!
    : `${words[i % words.length]}${words[Math.floor(i / words.length) % words.length]}`;
}

/**
 * A write batch in which every memory cites an event of its own that states it (placed after `events`, which keep
 * their `#n` indexes), so that the derivation audit admits it as supported, as a well-behaved agent's would be.
 * Parents a memory cites are kept.
 */
export function statedBatch(memories: Record<string, unknown>[], events: Record<string, unknown>[] = []) {
  return {
    events: [
      ...events,
      ...memories.map((m) => {
        const { content, subjects } = { ...sampleMemory(), ...m } as { content: string; subjects: string[] };
        return sampleEvent({ content: `Noted: ${content}`, subjects });
      }),
    ],
    memories: memories.map((m, i) => {
      const provenance = (m.provenance ?? {}) as { parentIds?: string[]; derivationRule?: string };
      return {
        ...m,
        provenance: {
          eventIds: [`#${events.length + i}`],
          parentIds: provenance.parentIds ?? [],
          derivationRule: provenance.derivationRule ?? 'extract-note',
        },
      };
    }),
  };
}
