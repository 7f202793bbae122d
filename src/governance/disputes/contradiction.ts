/**
 * What makes two memories disagree, and what an adjudication does to them. Pure: admission and the dispute
 * activities call it with records they read; unit and property tests call it with generated ones.
 */
import type { MemoryStatus } from '../../shared/lifecycle.js';

/** The fields of a memory the rules read (never its content: the content hash is enough to compare). */
export interface ClaimView {
  id: string;
  status: MemoryStatus;
  kind: string;
  subjects: readonly string[];
  attribute: string | null;
  contentHash: string;
  validFrom: Date;
  validTo: Date | null;
}

/** Statuses a new claim can contradict or correct: what is currently held. */
const HELD: readonly MemoryStatus[] = ['active', 'disputed'];

/** Valid times as half-open intervals [from, to); an open end runs forever. */
export function validTimesOverlap(
  a: Pick<ClaimView, 'validFrom' | 'validTo'>,
  b: Pick<ClaimView, 'validFrom' | 'validTo'>,
): boolean {
  const aEnd = a.validTo?.getTime() ?? Number.POSITIVE_INFINITY;
  const bEnd = b.validTo?.getTime() ?? Number.POSITIVE_INFINITY;
  return a.validFrom.getTime() < bEnd && b.validFrom.getTime() < aEnd;
}

function shareSubject(a: ClaimView, b: ClaimView): boolean {
  return a.subjects.some((s) => b.subjects.includes(s));
}

/**
 * A contradiction: another held claim about a shared subject and the same attribute, with different content,
 * over overlapping valid time. Claims without an attribute state nothing comparable and never contradict.
 */
export function contradicts(claim: ClaimView, other: ClaimView): boolean {
  return (
    claim.id !== other.id &&
    claim.attribute !== null &&
    claim.attribute === other.attribute &&
    HELD.includes(other.status) &&
    shareSubject(claim, other) &&
    claim.contentHash !== other.contentHash &&
    validTimesOverlap(claim, other)
  );
}

/**
 * A correction: `earlier` was derived from an event that `claim`'s source has since corrected (so it says what the
 * source no longer says), about a shared subject, of the same kind and attribute. The earlier claim is superseded.
 */
export function isCorrectedBy(earlier: ClaimView, claim: ClaimView): boolean {
  return (
    earlier.id !== claim.id &&
    HELD.includes(earlier.status) &&
    earlier.kind === claim.kind &&
    earlier.attribute === claim.attribute &&
    shareSubject(earlier, claim)
  );
}

/** When a superseded claim stops being valid: where its successor starts, or now if that is not later. */
export function supersededValidTo(
  loser: Pick<ClaimView, 'validFrom' | 'validTo'>,
  winner: Pick<ClaimView, 'validFrom'>,
  now: Date,
): Date {
  const end = winner.validFrom.getTime() > loser.validFrom.getTime() ? winner.validFrom : now;
  return loser.validTo && loser.validTo.getTime() < end.getTime() ? loser.validTo : end;
}

export const ADJUDICATIONS = ['keep-one', 'keep-both', 'reject-one'] as const;
export type Adjudication = (typeof ADJUDICATIONS)[number];

/** Where each claim of a dispute goes: the reviewer's choice applied to the pair. */
export function adjudicationTargets(
  memoryIds: readonly string[],
  outcome: Adjudication,
  chosen: string | null,
): Map<string, 'active' | 'superseded' | 'rejected'> {
  const targets = new Map<string, 'active' | 'superseded' | 'rejected'>();
  for (const id of memoryIds) {
    if (outcome === 'keep-both') targets.set(id, 'active');
    else if (outcome === 'keep-one') targets.set(id, id === chosen ? 'active' : 'superseded');
    else targets.set(id, id === chosen ? 'rejected' : 'active');
  }
  return targets;
}

/**
 * Splits records (in order) into groups that can never meet: two records land in one group when they share an
 * attribute and a subject, directly or through others. Groups keep the input order; records without an attribute
 * stand alone. Detection runs the groups in parallel and each group in order.
 */
export function claimGroups<T extends Pick<ClaimView, 'attribute' | 'subjects'>>(records: readonly T[]): T[][] {
  const parent = records.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const owner = new Map<string, number>();
  records.forEach((r, i) => {
    if (r.attribute === null) return;
    for (const subject of r.subjects) {
      const key = JSON.stringify([r.attribute, subject]);
      const other = owner.get(key);
      if (other === undefined) owner.set(key, i);
      else parent[root(i)] = root(other);
    }
  });
  const groups = new Map<number, T[]>();
  records.forEach((r, i) => groups.set(root(i), [...(groups.get(root(i)) ?? []), r]));
  return [...groups.values()];
}
