import { z } from 'zod';

/** What a hold covers: a data subject, named records, or a whole namespace. */
export const HoldScopeSchema = z.union([
  z.strictObject({ subjectId: z.string().min(1).max(256) }),
  z.strictObject({ recordIds: z.array(z.string().min(1).max(256)).min(1).max(10_000) }),
  z.strictObject({ namespace: z.string().min(1).max(128) }),
]);
export type HoldScope = z.output<typeof HoldScopeSchema>;

/** A released subject hold keeps only a keyed hash of the subject: it covers nothing any more. */
export interface ReleasedSubjectScope {
  subjectHash: string;
}

/** The scope as stored: as placed while the hold is active, only the subject's keyed hash once a subject hold is released. */
export type StoredHoldScope = HoldScope | ReleasedSubjectScope;

export const HoldPlacementSchema = z.strictObject({
  scope: HoldScopeSchema,
  /** The matter or case reference (an id, not a narrative). */
  caseRef: z.string().min(1).max(128),
});

export function holdScopeKind(scope: StoredHoldScope): 'subject' | 'records' | 'namespace' {
  return 'subjectId' in scope || 'subjectHash' in scope ? 'subject' : 'recordIds' in scope ? 'records' : 'namespace';
}

export interface LegalHold {
  _id: string;
  tenant: string;
  scope: StoredHoldScope;
  caseRef: string;
  placedBy: string;
  placedAt: Date;
  active: boolean;
  releasedBy: string | null;
  releasedAt: Date | null;
}

/** Whether a hold covers a record with these subjects and namespace. */
export function holdCovers(
  hold: LegalHold,
  record: { id: string; subjects: readonly string[]; namespace: string },
): boolean {
  if (!hold.active) return false;
  const scope = hold.scope;
  if ('subjectHash' in scope) return false;
  if ('subjectId' in scope) return record.subjects.includes(scope.subjectId);
  if ('recordIds' in scope) return scope.recordIds.includes(record.id);
  return record.namespace === scope.namespace;
}
