/**
 * Three-valued admissibility of one record for one reader, purpose, intent and time (seed 000): each axis —
 * scope, policy, lifecycle — is 1 (admissible), 0 (inadmissible) or unknown, and the record's verdict is their
 * strong-Kleene conjunction. Missing or unreadable governance metadata is unknown, never admissible; only a
 * verdict of 1 is served. Pure code: the read judge (`read-judge.ts`) applies it on every route.
 */
import { SENSITIVITIES, isScope, type MemoryRecord } from '../../substrate/model/records.js';
import { MEMORY_STATUSES, type MemoryStatus } from '../../shared/lifecycle.js';

export type Truth = 1 | 0 | 'unknown';
export const AXES = ['scope', 'policy', 'lifecycle'] as const;
export type Axis = (typeof AXES)[number];

/** Strong-Kleene AND: 0 dominates, then unknown; 1 only when every operand is 1. The empty conjunction is 1. */
export function kleeneAnd(values: readonly Truth[]): Truth {
  if (values.includes(0)) return 0;
  if (values.includes('unknown')) return 'unknown';
  return 1;
}

export type Intent = 'current' | 'history' | 'as-of';

/** What the reader may see, resolved once per call from the token and the read policies. */
export interface ReaderView {
  /** Owner scopes the reader may read; `all` for duties that read tenant-wide (review, erasure, legal hold). */
  scopes: readonly string[] | 'all';
  /** Sensitivities the read policy allows for the declared purpose. */
  sensitivities: readonly string[];
  intent: Intent;
  /** The instant an `as-of` question asks about. */
  asOf?: Date;
  /** The instant of the read: a `current` question excludes records whose valid time ended at or before it. */
  now: Date;
  /**
   * A duty read (review, the DPO's data-subject rights, legal holds): every status short of erasure is visible,
   * not only what the intent serves as context. Absent: the intent's statuses.
   */
  duty?: boolean;
  /** The legal role reading for a hold: records restricted by a hold are visible. Absent: they are not. */
  readsRestricted?: boolean;
  /**
   * Whether the data subjects' restriction of processing (Art. 18) or objection to this purpose (Art. 21) bars a
   * record about them, or (by its id) one derived from their records. Absent: nothing is barred (a duty read, or a
   * tenant with no restriction).
   */
  barred?: (subjects: readonly string[], id?: string) => boolean;
}

/** Statuses each intent serves as context. Expired records are handed to their retention erasure, never served. */
export const INTENT_STATUSES: Readonly<Record<Intent, readonly MemoryStatus[]>> = {
  current: ['active', 'disputed'],
  history: ['active', 'disputed', 'superseded'],
  'as-of': ['active', 'disputed', 'superseded'],
};

/** Statuses a duty read sees: everything an erasure has not reached. */
export const DUTY_STATUSES: readonly MemoryStatus[] = MEMORY_STATUSES.filter((s) => s !== 'deleted' && s !== 'purged');

export interface Verdict {
  axes: Record<Axis, Truth>;
  admissible: Truth;
}

const isDate = (d: unknown): d is Date => d instanceof Date && !Number.isNaN(d.getTime());

/** Scope: the record's owner scope is one the reader reads. A record without a readable scope is unknown. */
export function scopeTruth(record: Partial<MemoryRecord>, view: ReaderView): Truth {
  const scope = record.scope;
  if (typeof scope !== 'string' || !isScope(scope)) return 'unknown';
  if (view.scopes === 'all') return 1;
  return view.scopes.includes(scope) ? 1 : 0;
}

/**
 * Policy: the record's sensitivity is one the purpose admits, and no restriction or objection of its subjects
 * bars the purpose. An unknown sensitivity is unknown; so are unreadable subjects when the tenant restricts any.
 */
export function policyTruth(record: Partial<MemoryRecord>, view: ReaderView): Truth {
  const sensitivity = record.policy?.sensitivity;
  if (typeof sensitivity !== 'string' || !(SENSITIVITIES as readonly string[]).includes(sensitivity)) return 'unknown';
  if (!view.sensitivities.includes(sensitivity)) return 0;
  if (!view.barred) return 1;
  if (!Array.isArray(record.subjects)) return 'unknown';
  return view.barred(record.subjects, record._id) ? 0 : 1;
}

/**
 * Lifecycle: the status is one the read serves (the intent's, or every status short of erasure for a duty), the
 * record is under no hold (unless the legal role reads for one), and its valid time fits the intent: `current`
 * excludes a record whose valid time ended at or before now (a stale fact is not current), `as-of` needs the
 * instant inside it, `history` reads any. A context read's `current` also excludes a record whose accuracy is
 * contested by an open rectification, or which was derived from a record since rectified (`stale`). An unreadable
 * status, hold list, contest list or valid time is unknown.
 */
export function lifecycleTruth(record: Partial<MemoryRecord>, view: ReaderView): Truth {
  const status = record.status;
  if (typeof status !== 'string' || !(MEMORY_STATUSES as readonly string[]).includes(status)) return 'unknown';
  if (record.restrictedBy !== undefined && !Array.isArray(record.restrictedBy)) return 'unknown';
  if ((record.restrictedBy?.length ?? 0) > 0 && !view.readsRestricted) return 0;
  const statuses = view.duty ? DUTY_STATUSES : INTENT_STATUSES[view.intent];
  if (!statuses.includes(status as MemoryStatus)) return 0;
  if (view.intent === 'history') return 1;
  if (record.validTo !== null && record.validTo !== undefined && !isDate(record.validTo)) return 'unknown';
  const to = record.validTo ? record.validTo.getTime() : Infinity;
  if (view.intent === 'current') {
    if (!isDate(view.now)) return 'unknown';
    // A value under correction, or built from one since corrected, is not served as current to a context read.
    if (!view.duty) {
      if (record.contestedBy !== undefined && !Array.isArray(record.contestedBy)) return 'unknown';
      if ((record.contestedBy?.length ?? 0) > 0 || record.stale !== undefined) return 0;
    }
    return view.now.getTime() < to ? 1 : 0;
  }
  if (!view.asOf || !isDate(record.validFrom)) return 'unknown';
  const t = view.asOf.getTime();
  return record.validFrom.getTime() <= t && t < to ? 1 : 0;
}

export function judge(record: Partial<MemoryRecord>, view: ReaderView): Verdict {
  const axes = {
    scope: scopeTruth(record, view),
    policy: policyTruth(record, view),
    lifecycle: lifecycleTruth(record, view),
  };
  return { axes, admissible: kleeneAnd(Object.values(axes)) };
}

/** Counts of candidates refused (0) and unresolved (unknown) per axis: numbers only, no ids or content. */
export type RefusalCounts = Record<Axis, { refused: number; unresolved: number }>;

export function emptyRefusalCounts(): RefusalCounts {
  return {
    scope: { refused: 0, unresolved: 0 },
    policy: { refused: 0, unresolved: 0 },
    lifecycle: { refused: 0, unresolved: 0 },
  };
}

export function countVerdict(counts: RefusalCounts, verdict: Verdict): void {
  for (const axis of AXES) {
    const truth = verdict.axes[axis];
    if (truth === 0) counts[axis].refused++;
    else if (truth === 'unknown') counts[axis].unresolved++;
  }
}
