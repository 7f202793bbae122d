/**
 * The one place that decides what a reader sees of a record, on every route: the owner scope, the purpose's
 * sensitivities, the lifecycle (status, holds, valid time for the intent) and the role's view. Its answer is a
 * `Sight`, the only thing the API's presenters accept: a route cannot present a record the judge has not seen.
 * A record the reader may not see is `null`, exactly as a missing one. Pure code.
 */
import type { EventRecord, MemoryRecord } from '../../substrate/model/records.js';
import { judge, type ReaderView } from './admissibility.js';
import type { Grant, Reader } from './reader.js';
import type { RestrictionMark } from '../rights/restriction.js';

declare const sighted: unique symbol;

/** A record the judge let this reader see, and how: the content or the content-free view. */
export type Sight<T> = {
  readonly record: T;
  readonly view: Grant['view'];
  /** The purpose whose grant admitted it. */
  readonly purpose: string;
  /** To a duty read: the restriction or objections of the record's subjects (a context read never sees one). */
  readonly restriction?: RestrictionMark;
  readonly [sighted]: true;
};

export interface SeeOptions {
  /** Search and retrieval serve content only: a content-free grant never fills their results. */
  contentOnly?: boolean;
}

/**
 * A context read (any purpose that is not a duty) does not serve a record whose subject restricted processing or
 * objected to a purpose the reader's token grants, whichever of them this request declared: otherwise naming
 * another granted purpose would sidestep the objection. A duty read sees it, marked (`sight`).
 */
function barredFor(reader: Reader, grant: Grant): ReaderView['barred'] {
  if (grant.duty || reader.restrictions.size === 0) return undefined;
  const { restrictions, grantedPurposes } = reader;
  // A reader that may name any purpose is bound by every objection.
  if (grantedPurposes === 'any')
    return (subjects, id) =>
      restrictions.bars(subjects, grant.purpose, id) || restrictions.markOf(subjects, id) !== null;
  const purposes = [grant.purpose, ...grantedPurposes.filter((p) => p !== grant.purpose)];
  return (subjects, id) => purposes.some((p) => restrictions.bars(subjects, p, id));
}

function viewOf(reader: Reader, grant: Grant): ReaderView {
  const barred = barredFor(reader, grant);
  return {
    ...(barred ? { barred } : {}),
    scopes: grant.scopes,
    sensitivities: grant.sensitivities,
    intent: reader.intent,
    ...(reader.asOf ? { asOf: reader.asOf } : {}),
    now: reader.now,
    duty: grant.duty,
    readsRestricted: grant.readsRestricted,
  };
}

/** Content grants are tried before content-free ones, so a reader with both sees the most it may. */
function ordered(reader: Reader, options: SeeOptions): Grant[] {
  const content = reader.grants.filter((g) => g.view === 'content');
  return options.contentOnly ? content : [...content, ...reader.grants.filter((g) => g.view === 'content-free')];
}

function sight<T extends { _id: string }>(reader: Reader, record: T, subjects: unknown, grant: Grant): Sight<T> {
  const mark =
    grant.duty && reader.restrictions.size > 0 && Array.isArray(subjects)
      ? reader.restrictions.markOf(subjects as string[], record._id)
      : null;
  return { record, view: grant.view, purpose: grant.purpose, ...(mark ? { restriction: mark } : {}) } as Sight<T>;
}

/** The three-valued verdict of one grant on a memory: exported for retrieval's refusal counts. */
export function verdictOf(reader: Reader, grant: Grant, memory: Partial<MemoryRecord>) {
  return judge(memory, viewOf(reader, grant));
}

export function seeMemory(
  reader: Reader,
  memory: MemoryRecord | null | undefined,
  options: SeeOptions = {},
): Sight<MemoryRecord> | null {
  if (!memory || memory.tenant !== reader.principal.tenant) return null;
  for (const grant of ordered(reader, options)) {
    if (verdictOf(reader, grant, memory).admissible === 1) return sight(reader, memory, memory.subjects, grant);
  }
  return null;
}

/**
 * Events are governed like memories: an owner scope set at write, a sensitivity, holds; an event is live until an
 * erasure marks it deleted. Valid time and the intent's statuses are about memories' claims and do not apply.
 */
export function seeEvent(reader: Reader, event: EventRecord | null | undefined): Sight<EventRecord> | null {
  if (!event || event.tenant !== reader.principal.tenant) return null;
  for (const grant of ordered(reader, {})) {
    const asMemory: Partial<MemoryRecord> = {
      ...(event.scope !== undefined ? { scope: event.scope } : {}),
      policy: { sensitivity: event.sensitivity } as MemoryRecord['policy'],
      subjects: event.subjects,
      status: event.deleted === false ? 'active' : 'deleted',
      ...(event.restrictedBy !== undefined ? { restrictedBy: event.restrictedBy } : {}),
    };
    const verdict = judge(asMemory, { ...viewOf(reader, grant), intent: 'history', duty: true });
    if (verdict.admissible === 1) return sight(reader, event, event.subjects, grant);
  }
  return null;
}

/** True when the reader has no grant at all: the purpose it named (or its roles' duties) reads nothing. */
export function readsNothing(reader: Reader): boolean {
  return reader.grants.length === 0;
}
