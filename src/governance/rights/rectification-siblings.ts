/**
 * The copies a rectification reaches. A wrong value is often stated by more than the one record the DPO names: built
 * again from the same event, or written again by another agent. Every current record of the same tenant, the same
 * data subjects and the same attribute that states the same value (the same content, or the same once case, spacing
 * and a final full stop are set aside) is a sibling of the named record, and the correction reaches it too, as far
 * as the processing judge lets a correction touch it. One filing reaches at most `MAX_RECTIFICATION_SIBLINGS` of
 * them, so that it cannot rewrite a tenant.
 */
import type { ClaimLookup } from '../../substrate/memories/claim-lookup.js';
import type { MemoryStore } from '../../substrate/memories/memory-store.js';
import type { MemoryRecord } from '../../substrate/model/records.js';
import { normalisedContent } from '../../substrate/views/extractive-summariser.js';
import { mayProcess, partitionForAct, type ProcessingContext, type Rule } from '../read/processing-judge.js';
import { NO_RESTRICTIONS } from './restriction.js';

/** Records besides the named one that one correction may reach. */
export const MAX_RECTIFICATION_SIBLINGS = 100;

/** What a correction of records about `subjects` is judged under: the DPO's duty, across the tenant. */
export function correctionContext(tenant: string, subjects: readonly string[], now: Date): ProcessingContext {
  return { tenant, scopes: 'all', purposes: [], restrictions: NO_RESTRICTIONS, now, about: subjects };
}

/** May a correction touch this record (see `governance/read/processing-judge.ts`, act `correct`)? */
export function correctionVerdict(record: MemoryRecord, now: Date) {
  return mayProcess('correct', record, correctionContext(record.tenant, record.subjects, now));
}

const sameSubjects = (a: readonly string[], b: readonly string[]) => {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((s) => set.has(s));
};

/** Whether `other` states what `named` states about the same subjects' same attribute. Pure. */
export function statesSameValue(
  named: Pick<MemoryRecord, '_id' | 'tenant' | 'subjects' | 'attribute' | 'contentHash' | 'content'>,
  other: Pick<MemoryRecord, '_id' | 'tenant' | 'subjects' | 'attribute' | 'contentHash' | 'content'>,
): boolean {
  return (
    other._id !== named._id &&
    other.tenant === named.tenant &&
    named.attribute !== null &&
    other.attribute === named.attribute &&
    sameSubjects(named.subjects, other.subjects) &&
    (other.contentHash === named.contentHash || normalisedContent(other.content) === normalisedContent(named.content))
  );
}

/**
 * The siblings among `candidates` a correction may touch, in id order, and how many each rule of the processing
 * judge kept out (counts only). Pure.
 */
export function siblingsAmong(
  named: MemoryRecord,
  candidates: readonly MemoryRecord[],
  now: Date,
): { siblings: MemoryRecord[]; refused: Partial<Record<Rule, number>> } {
  const same = candidates.filter((c) => statesSameValue(named, c));
  const { allowed, refused } = partitionForAct(
    'correct',
    same,
    (r) => r,
    correctionContext(named.tenant, named.subjects, now),
  );
  return { siblings: [...allowed].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0)), refused };
}

export type SiblingSearch =
  | { kind: 'found'; siblings: MemoryRecord[]; refused: Partial<Record<Rule, number>> }
  /** More than `MAX_RECTIFICATION_SIBLINGS` current records state the value: `count` of them, at least. */
  | { kind: 'too-many'; count: number };

/**
 * The named record's siblings as stored now: the claims about its subjects' attribute (read without content), those
 * the judge does not refuse from their status alone read in full, then judged again whole. More same-content copies
 * than the bound are counted without being read.
 */
export async function findRectificationSiblings(
  deps: { claims: Pick<ClaimLookup, 'bySubjectAttribute'>; memories: Pick<MemoryStore, 'getMany'> },
  named: MemoryRecord,
  now: Date,
): Promise<SiblingSearch> {
  if (named.attribute === null) return { kind: 'found', siblings: [], refused: {} };
  const ctx = correctionContext(named.tenant, named.subjects, now);
  const claims = (await deps.claims.bySubjectAttribute(named.tenant, named.subjects, named.attribute)).filter(
    (c) =>
      c.id !== named._id &&
      sameSubjects(named.subjects, c.subjects) &&
      mayProcess('correct', { _id: c.id, tenant: named.tenant, status: c.status, subjects: c.subjects }, ctx).allowed,
  );
  const sameHash = claims.filter((c) => c.contentHash === named.contentHash).length;
  if (sameHash > MAX_RECTIFICATION_SIBLINGS) return { kind: 'too-many', count: sameHash };
  const { siblings, refused } = siblingsAmong(
    named,
    await deps.memories.getMany(
      named.tenant,
      claims.map((c) => c.id),
    ),
    now,
  );
  if (siblings.length > MAX_RECTIFICATION_SIBLINGS) return { kind: 'too-many', count: siblings.length };
  return { kind: 'found', siblings, refused };
}
