import { z } from 'zod';

/** What a hold covers: a data subject, named records, or a whole namespace. */
export const HoldScopeSchema = z.union([
  z.strictObject({ subjectId: z.string().min(1).max(256) }),
  z.strictObject({ recordIds: z.array(z.string().min(1).max(256)).min(1).max(10_000) }),
  z.strictObject({ namespace: z.string().min(1).max(128) }),
]);
export type HoldScope = z.output<typeof HoldScopeSchema>;

/**
 * A subject hold as stored: only a keyed hash of the subject, from its placement on, so that no version of its row
 * (released or not) names the subject. It covers the records whose subjects hash to it while it is active.
 */
export interface SubjectHashScope {
  subjectHash: string;
}

/** The scope as stored; a subject hold placed before subjects were hashed at placement may still name its subject. */
export type StoredHoldScope = HoldScope | SubjectHashScope;

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

/**
 * Whether a hold covers a record with these subjects and namespace (`subjectHashes` keys a subject as holds do,
 * under every configured fingerprint key).
 */
export function holdCovers(
  hold: LegalHold,
  record: { id: string; subjects: readonly string[]; namespace: string },
  subjectHashes: (subject: string) => readonly string[],
): boolean {
  if (!hold.active) return false;
  const scope = hold.scope;
  if ('subjectHash' in scope) return record.subjects.some((s) => subjectHashes(s).includes(scope.subjectHash));
  if ('subjectId' in scope) return record.subjects.includes(scope.subjectId);
  if ('recordIds' in scope) return scope.recordIds.includes(record.id);
  return record.namespace === scope.namespace;
}
