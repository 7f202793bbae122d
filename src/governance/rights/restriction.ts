/**
 * A data subject's restriction of processing (GDPR Art. 18) or objection to purposes (Art. 21), as the DPO files
 * it. A restriction bars every context read of the subject's records; an objection bars the purposes it names.
 * Duty reads (review, erasure, access requests, legal holds, audit) still see the records, marked. The stored
 * request keeps the subject as a keyed hash and the reason as a keyed hash: it names nobody in the clear. Pure code.
 */
import { z } from 'zod';
import { plainString } from '../../shared/plain-text.js';
import { validationError } from '../../shared/errors.js';
import { BoundedMap } from '../../shared/bounded-map.js';

import { OBJECTION_GROUNDS, RESTRICTION_GROUNDS } from '../../shared/api-contract/restriction.js';

// The grounds are part of the API's contract (the console offers them from there).
export { OBJECTION_GROUNDS, RESTRICTION_GROUNDS };

/** Purposes read as a duty: a subject cannot object to them here (their own rules decide). */
export const UNOBJECTABLE_PURPOSES: ReadonlySet<string> = new Set([
  'review',
  'erasure',
  'access-request',
  'legal-hold',
  'audit',
]);

/**
 * Most active restrictions and objections one tenant may hold: the read judge loads a tenant's whole active set on
 * every read request, so the set is bounded here rather than at read time.
 */
export const MAX_ACTIVE_RESTRICTIONS = 5_000;

const purpose = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z0-9-]*$/, 'lower-case letters, digits and "-"');

export const RestrictionFilingSchema = z.strictObject({
  /** A restriction is about one data subject: the records are found by the subject at each read. */
  selector: z.strictObject({ subjectId: plainString(256) }),
  legalGround: z.enum([...RESTRICTION_GROUNDS, ...OBJECTION_GROUNDS]),
  /** Why, in the DPO's words: kept as a keyed hash only. */
  reason: plainString(2000),
  /** Absent: a restriction (every context purpose). Present: an objection to these purposes only. */
  purposes: z.array(purpose).min(1).max(32).optional(),
  /** The client's idempotency key: filing again with it returns the same request. */
  requestKey: plainString(128),
});
export type RestrictionFiling = z.output<typeof RestrictionFilingSchema>;

export const RestrictionLiftSchema = z.strictObject({ reason: plainString(2000) });

export type RestrictionKind = 'restriction' | 'objection';

/**
 * The checks a schema cannot state: the ground fits the kind (Art. 18 for a restriction, Art. 21 for an
 * objection), no purpose is a duty, no purpose is named twice. Throws a validation error naming the field.
 */
export function kindOf(filing: RestrictionFiling): RestrictionKind {
  const kind: RestrictionKind = filing.purposes ? 'objection' : 'restriction';
  const grounds: readonly string[] = kind === 'restriction' ? RESTRICTION_GROUNDS : OBJECTION_GROUNDS;
  if (!grounds.includes(filing.legalGround))
    throw validationError(
      'legalGround',
      kind === 'restriction'
        ? 'a restriction (no purposes) is filed on an Art. 18(1) ground'
        : 'an objection (purposes named) is filed on an Art. 21 ground',
    );
  (filing.purposes ?? []).forEach((p, i) => {
    if (UNOBJECTABLE_PURPOSES.has(p)) throw validationError(`purposes.${i}`, 'a duty read cannot be objected to');
    if (filing.purposes!.indexOf(p) !== i) throw validationError(`purposes.${i}`, 'named twice');
  });
  return kind;
}

/** The stored request: the subject and both reasons as keyed hashes only. */
export interface SubjectRestriction {
  _id: string;
  tenant: string;
  kind: RestrictionKind;
  /** Keyed hash of the subject (`restriction-subject`, current fingerprint key). */
  subjectHash: string;
  keyId: string;
  /** null for a restriction (every context purpose). */
  purposes: string[] | null;
  legalGround: string;
  reasonHash: string;
  filedBy: string;
  filedAt: Date;
  active: boolean;
  /**
   * Records derived, at filing, from the subject's records by lineage and not themselves about the subject: the
   * restriction follows them as an erasure would (a view labelled with another subject but built from this one's
   * record repeats what this one said). Ids only. Absent on filings made before lineage was followed.
   */
  derivedIds?: string[];
  liftedBy: string | null;
  liftedAt: Date | null;
  liftReasonHash: string | null;
}

/** What a duty read is told about a record whose subject is restricted or objected to. */
export interface RestrictionMark {
  restricted: boolean;
  objectedPurposes: string[];
}

/**
 * A tenant's active restrictions as one read request sees them, loaded once per request: the read judge asks it
 * about each record's subjects without another lookup.
 */
export interface RestrictionSnapshot {
  readonly size: number;
  /**
   * Whether a context read for `purpose` may not serve a record about these subjects, or (given its id) derived by
   * lineage from a restricted subject's record.
   */
  bars(subjects: readonly string[], purpose: string, id?: string): boolean;
  /** What restricts these subjects or this derived record (for a duty read's mark), or null. */
  markOf(subjects: readonly string[], id?: string): RestrictionMark | null;
}

export const NO_RESTRICTIONS: RestrictionSnapshot = { size: 0, bars: () => false, markOf: () => null };

/** Derived records one filing follows at most: a subject whose records feed more is refused, naming the selector. */
export const MAX_DERIVED_PER_RESTRICTION = 10_000;

/** Subjects whose verdict a snapshot remembers (it outlives one request while the tenant's set is unchanged). */
const REMEMBERED_SUBJECTS = 10_000;

/**
 * The snapshot over `active` (subject hashes and purposes). `hashesOf` gives a subject's hash under every
 * configured key, so a restriction filed before a key rotation still matches; a subject is hashed once while it
 * stays among the most recently judged.
 */
export function restrictionSnapshot(
  active: readonly (Pick<SubjectRestriction, 'subjectHash' | 'purposes'> & { derivedIds?: readonly string[] })[],
  hashesOf: (subject: string) => string[],
): RestrictionSnapshot {
  if (active.length === 0) return NO_RESTRICTIONS;
  const bySubject = new Map<string, { all: boolean; purposes: Set<string> }>();
  const byDerived = new Map<string, { all: boolean; purposes: Set<string> }>();
  const add = (map: typeof bySubject, key: string, purposes: readonly string[] | null) => {
    const entry = map.get(key) ?? { all: false, purposes: new Set<string>() };
    if (purposes === null) entry.all = true;
    else for (const p of purposes) entry.purposes.add(p);
    map.set(key, entry);
  };
  for (const r of active) {
    add(bySubject, r.subjectHash, r.purposes);
    for (const id of r.derivedIds ?? []) add(byDerived, id, r.purposes);
  }
  const derivedMark = (id: string | undefined): RestrictionMark[] => {
    const entry = id === undefined ? undefined : byDerived.get(id);
    return entry ? [{ restricted: entry.all, objectedPurposes: [...entry.purposes].sort() }] : [];
  };
  const seen = new BoundedMap<string, RestrictionMark | null>(REMEMBERED_SUBJECTS);
  const markOfSubject = (subject: string): RestrictionMark | null => {
    let mark = seen.get(subject);
    if (mark !== undefined) return mark;
    const entries = hashesOf(subject).flatMap((h) => bySubject.get(h) ?? []);
    mark =
      entries.length === 0
        ? null
        : {
            restricted: entries.some((e) => e.all),
            objectedPurposes: [...new Set(entries.flatMap((e) => [...e.purposes]))].sort(),
          };
    seen.set(subject, mark);
    return mark;
  };
  const marksOf = (subjects: readonly string[], id: string | undefined) => [
    ...subjects.flatMap((s) => (typeof s === 'string' ? (markOfSubject(s) ?? []) : [])),
    ...derivedMark(id),
  ];
  return {
    size: active.length,
    bars(subjects, purpose, id) {
      return marksOf(subjects, id).some((m) => m.restricted || m.objectedPurposes.includes(purpose));
    },
    markOf(subjects, id) {
      const marks = marksOf(subjects, id);
      if (marks.length === 0) return null;
      return {
        restricted: marks.some((m) => m.restricted),
        objectedPurposes: [...new Set(marks.flatMap((m) => m.objectedPurposes))].sort(),
      };
    },
  };
}
