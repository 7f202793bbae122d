/**
 * What the abuse bench's clients write: the honest client's small batch (an event and the fact it states), the
 * verifier's worst case (test/support/verifier-worst-case.ts) citing stored evidence, and batches as large as the
 * body limit takes whose memory cites every event of them.
 */
import { randomUUID } from 'node:crypto';
import { WORST_CASE_MEMORY } from '../../test/support/verifier-worst-case.js';

const OCCURRED_AT = '2026-11-01T10:00:00Z';

export function event(subject: string, content: string) {
  return {
    source: 'bench',
    externalId: `ext-${randomUUID()}`,
    namespace: 'support',
    subjects: [subject],
    content,
    occurredAt: OCCURRED_AT,
  };
}

export function fact(subject: string, content: string, eventIds: string[]) {
  return {
    namespace: 'support',
    subjects: [subject],
    kind: 'fact',
    attribute: 'residence',
    content,
    validFrom: OCCURRED_AT,
    purpose: 'customer-support',
    sensitivity: 'internal',
    jurisdiction: 'PT',
    trustTier: 1,
    confidence: 0.9,
    provenance: { eventIds, parentIds: [], derivationRule: 'extract-fact' },
  };
}

/** Loop `n` of the honest client: one event about a subject of its own, and the fact it states. */
export function honestBatch(subject: string, n: number) {
  const city = ['Berlin', 'Porto', 'Lisbon', 'Munich'][n % 4]!;
  return {
    events: [event(subject, `The customer moved to ${city} in May 2024 for a new job (ticket ${n}).`)],
    memories: [fact(subject, `The customer moved to ${city} in May 2024.`, ['#0'])],
  };
}

/** The verifier's worst case, citing evidence stored beforehand (within the audit's byte cap). */
export function worstCaseBatch(subject: string, evidenceIds: string[]) {
  return { memories: [fact(subject, WORST_CASE_MEMORY, evidenceIds)] };
}

/** `events` of ~32 KiB (as large as an event may be) and a memory citing all of them. */
export function oversizeBatch(subject: string, contents: string[]) {
  const nonce = randomUUID();
  return {
    events: contents.map((c) => event(subject, `${c.slice(0, c.length - nonce.length - 1)} ${nonce}`)),
    memories: [
      fact(
        subject,
        'Ana visited the depot after she met Bob in Berlin.',
        contents.map((_, i) => `#${i}`),
      ),
    ],
  };
}
