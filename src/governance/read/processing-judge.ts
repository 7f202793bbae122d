/**
 * The one place that decides what a record may be used for beyond being shown to a reader: cited by a new write,
 * read as evidence by the derivation audit, consolidated into a view, exported to a data subject, corrected by a
 * rectification. (Serving a record to a reader is the read judge's `seeMemory`, which applies the same marks.) A
 * path that processes records asks `mayProcess`; it never re-states a rule. `ACT_RULES` is the table of acts ×
 * rules docs/rules.md shows; a rule an act does not list does not bind it, and `RULE_EXEMPTIONS` says why. Pure code.
 *
 * A record whose governance cannot be read (a status, hold list, contest list, valid time or subject list of the
 * wrong type) is refused for every act that checks that mark: processing fails closed, as reading does.
 */
import { MEMORY_STATUSES, SERVABLE_STATUSES, type MemoryStatus } from '../../shared/lifecycle.js';
import type { EventRecord, MemoryRecord } from '../../substrate/model/records.js';
import type { RestrictionSnapshot } from '../rights/restriction.js';

export const ACTS = ['cite', 'evidence', 'consolidate', 'export', 'correct'] as const;
export type Act = (typeof ACTS)[number];

export const RULES = [
  'tenant',
  'owner-scope',
  'erased',
  'lifecycle',
  'held',
  'restricted',
  'objected',
  'valid-time',
  'contested',
  'stale',
  'quarantined',
  'about-subject',
] as const;
export type Rule = (typeof RULES)[number];

/** Which rules bind each act, in the order they are checked (the first broken one is the answer). */
export const ACT_RULES: Readonly<Record<Act, readonly Rule[]>> = {
  cite: [
    'tenant',
    'owner-scope',
    'erased',
    'quarantined',
    'lifecycle',
    'held',
    'restricted',
    'objected',
    'contested',
    'stale',
  ],
  evidence: [
    'tenant',
    'owner-scope',
    'erased',
    'quarantined',
    'lifecycle',
    'held',
    'restricted',
    'objected',
    'contested',
  ],
  consolidate: [
    'tenant',
    'owner-scope',
    'erased',
    'quarantined',
    'lifecycle',
    'held',
    'restricted',
    'objected',
    'valid-time',
    'contested',
    'stale',
  ],
  export: ['tenant', 'about-subject'],
  correct: ['tenant', 'erased', 'lifecycle', 'held', 'about-subject'],
};

/** Why a rule does not bind an act: the exceptions the law or the act's nature makes. */
export const RULE_EXEMPTIONS: Readonly<Partial<Record<Act, Partial<Record<Rule, string>>>>> = {
  cite: {
    'valid-time': 'a fact whose valid time ended is history, and history may be cited (the new record says so)',
    'about-subject': 'a write may cite any record its writer may read, whoever it is about',
  },
  evidence: {
    'valid-time': 'what was said before the write is evidence of it, whenever it stopped being true',
    stale: 'events are never stale; cited memories are checked as citations',
    'about-subject': 'the history searched is already the memory’s own subjects’',
  },
  consolidate: {
    'about-subject': 'views group a subject’s own records',
  },
  export: {
    'owner-scope': 'the DPO answers for the whole tenant (a duty read)',
    erased: 'the package tells the subject what is still stored, erasure under way included',
    lifecycle: 'Art. 15 covers every status short of erasure',
    held: 'a hold keeps records from agents, not from the subject (the package counts them)',
    restricted: 'a restriction bars processing for others, never the subject’s own access (Art. 18(2))',
    objected: 'an objection bars the purposes objected to, not the subject’s own access',
    'valid-time': 'ended facts are part of what is held',
    contested: 'a value under correction is shown, marked',
    stale: 'a stale record is shown as it is',
    quarantined: 'a quarantined record is held about the subject all the same',
  },
  correct: {
    'owner-scope': 'the DPO corrects across the tenant (a duty)',
    restricted: 'a restriction pending a correction (Art. 18(1)(a)) must not block that correction',
    objected: 'an objection does not stop the record being made accurate',
    'valid-time': 'a historical value may be wrong too',
    contested: 'the correction contests the record itself',
    stale: 'a stale record may be corrected directly',
    quarantined: 'a quarantined candidate is checked by its reviewer, not corrected',
  },
};

/** What one rule protects, for the table in docs/rules.md and refusal reports. */
export const RULE_MEANING: Readonly<Record<Rule, string>> = {
  tenant: 'the record belongs to the acting tenant',
  'owner-scope': 'the record is in a scope the actor reads (its own, or the tenant’s shared)',
  erased: 'an erasure has not reached the record (deleted or purged)',
  lifecycle: 'the record is in a status the act uses',
  held: 'no legal hold restricts the record',
  restricted: 'no subject of the record, or of a record it derives from, restricted processing (Art. 18)',
  objected: 'no subject of the record objected to a purpose the actor may process for (Art. 21)',
  'valid-time': 'the fact’s valid time has not ended',
  contested: 'no rectification contests the record’s accuracy (for an event: found a value derived from it wrong)',
  stale: 'the record was not derived from a value since corrected',
  quarantined: 'the record is not waiting in quarantine for a reviewer',
  'about-subject': 'the record is about a data subject the request names',
};

/** Statuses each act uses (the `lifecycle` rule). */
const ACT_STATUSES: Readonly<Record<Act, readonly MemoryStatus[]>> = {
  cite: SERVABLE_STATUSES,
  evidence: ['active', 'disputed', 'superseded'],
  consolidate: ['active'],
  export: MEMORY_STATUSES,
  correct: ['active', 'disputed'],
};

/** A memory, or an event seen as one (`asProcessed`): the marks the rules read. */
export type ProcessedRecord = Pick<MemoryRecord, '_id' | 'tenant'> &
  Partial<
    Pick<
      MemoryRecord,
      | 'scope'
      | 'subjects'
      | 'status'
      | 'restrictedBy'
      | 'validFrom'
      | 'validTo'
      | 'contestedBy'
      | 'stale'
      | 'quarantinedFor'
    >
  >;

/**
 * An event as the rules see it: live until an erasure marks it deleted; contested once a rectification found a value
 * derived from it inaccurate (`correctedBy`), so it is no evidence and no source for new records; no valid time or
 * stale mark.
 */
export function eventAsProcessed(event: EventRecord): ProcessedRecord {
  return {
    _id: event._id,
    tenant: event.tenant,
    ...(event.scope !== undefined ? { scope: event.scope } : {}),
    subjects: event.subjects,
    status: event.deleted === false ? 'active' : 'deleted',
    ...(event.restrictedBy !== undefined ? { restrictedBy: event.restrictedBy } : {}),
    ...(event.correctedBy !== undefined ? { contestedBy: event.correctedBy } : {}),
  };
}

export interface ProcessingContext {
  tenant: string;
  /** Owner scopes the actor may use: its own and the tenant's shared scope, or `all` for a duty. */
  scopes: readonly string[] | 'all';
  /**
   * Purposes the actor may process for: an objection to any of them bars the record, whichever the actor names
   * for this act. `any`: an objection to any purpose bars it (consolidation builds views every purpose reads).
   */
  purposes: readonly string[] | 'any';
  restrictions: RestrictionSnapshot;
  now: Date;
  /** `export` and `correct`: the data subjects the request is about. Absent: the request names no subject. */
  about?: readonly string[];
}

export type ProcessingVerdict = { allowed: true } | { allowed: false; rule: Rule };

const isDate = (d: unknown): d is Date => d instanceof Date && !Number.isNaN(d.getTime());
const listOrAbsent = (v: unknown) => v === undefined || Array.isArray(v);
const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;

type Check = (record: ProcessedRecord, ctx: ProcessingContext, act: Act) => boolean;

/** Each rule as a predicate: true when the record passes it. An unreadable mark fails. */
const PASSES: Readonly<Record<Rule, Check>> = {
  tenant: (r, ctx) => r.tenant === ctx.tenant,
  'owner-scope': (r, ctx) =>
    typeof r.scope === 'string' && (ctx.scopes === 'all' || (ctx.scopes as readonly string[]).includes(r.scope)),
  erased: (r) => r.status !== 'deleted' && r.status !== 'purged',
  lifecycle: (r, _ctx, act) => typeof r.status === 'string' && ACT_STATUSES[act].includes(r.status),
  quarantined: (r) => !(r.status === 'candidate' && nonEmpty(r.quarantinedFor)),
  held: (r) => listOrAbsent(r.restrictedBy) && !nonEmpty(r.restrictedBy),
  restricted: (r, ctx) =>
    ctx.restrictions.size === 0 ||
    (Array.isArray(r.subjects) && !ctx.restrictions.markOf(r.subjects, r._id)?.restricted),
  objected: (r, ctx) => {
    if (ctx.restrictions.size === 0) return true;
    if (!Array.isArray(r.subjects)) return false;
    const objected = ctx.restrictions.markOf(r.subjects, r._id)?.objectedPurposes ?? [];
    if (objected.length === 0) return true;
    return ctx.purposes !== 'any' && !objected.some((p) => (ctx.purposes as readonly string[]).includes(p));
  },
  'valid-time': (r, ctx) => {
    if (r.validTo === null || r.validTo === undefined) return true;
    return isDate(r.validTo) && ctx.now.getTime() < r.validTo.getTime();
  },
  contested: (r) => listOrAbsent(r.contestedBy) && !nonEmpty(r.contestedBy),
  stale: (r) => r.stale === undefined || r.stale === null,
  'about-subject': (r, ctx) =>
    Array.isArray(r.subjects) && (ctx.about ?? []).some((s) => (r.subjects as readonly string[]).includes(s)),
};

/** May `record` be used for `act`? The first rule of the act's row it breaks, or allowed. */
export function mayProcess(act: Act, record: ProcessedRecord, ctx: ProcessingContext): ProcessingVerdict {
  for (const rule of ACT_RULES[act]) {
    if (!PASSES[rule](record, ctx, act)) return { allowed: false, rule };
  }
  return { allowed: true };
}

/** The records `act` may use, and how many each rule kept out (counts only: no ids, no content). */
export function partitionForAct<T>(
  act: Act,
  records: readonly T[],
  asRecord: (item: T) => ProcessedRecord,
  ctx: ProcessingContext,
): { allowed: T[]; refused: Partial<Record<Rule, number>> } {
  const allowed: T[] = [];
  const refused: Partial<Record<Rule, number>> = {};
  for (const item of records) {
    const verdict = mayProcess(act, asRecord(item), ctx);
    if (verdict.allowed) allowed.push(item);
    else refused[verdict.rule] = (refused[verdict.rule] ?? 0) + 1;
  }
  return { allowed, refused };
}
