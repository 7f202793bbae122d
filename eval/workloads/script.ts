/**
 * What every workload generator yields: a time-ordered script of events, the questions asked at checkpoints (their
 * expected answers derived from the events, never typed in), the red-team probes and the erasure requests. Pure data:
 * the systems under evaluation replay the same script.
 */

/** The one fact an event states: `key` names what it is about (one owner, one policy), `value` what it says now. */
export interface StatedFact {
  key: string;
  value: string;
}

export interface ScriptEvent {
  id: string;
  at: Date;
  tenant: string;
  /** Who wrote it. */
  principal: string;
  /** Shared with the tenant, or private to its writer. */
  scope: 'principal' | 'tenant';
  subjects: string[];
  text: string;
  fact?: StatedFact;
  /** A unique marker string in its text (W3, W4): found anywhere after an erasure or outside its scope, it leaked. */
  canary?: string;
  /** Events this one was derived from (a digest quoting them): a derived view. */
  derivedFrom?: string[];
}

export interface Question {
  id: string;
  workload: string;
  /** When it is asked: every event at or before this time has been written. */
  askedAt: Date;
  tenant: string;
  principal: string;
  text: string;
  /** `current`: the value in force when asked; `as-of`: the value in force at `asOf`. */
  intent: 'current' | 'as-of';
  asOf?: Date;
  key: string;
  /** The value in force at the asked time, folded from the script. */
  expected: string;
}

/** A red-team query: anything served from another tenant, or from another principal's private scope, leaked. */
export interface Probe {
  id: string;
  askedAt: Date;
  tenant: string;
  principal: string;
  text: string;
}

export interface ErasureRequest {
  tenant: string;
  subject: string;
  /** When it is filed: after every event up to this time. */
  at: Date;
}

export interface Script {
  workload: string;
  events: ScriptEvent[];
  questions: Question[];
  probes: Probe[];
  erasures: ErasureRequest[];
}

/** The value of `key` in force at `at`: the last statement of it at or before then (null when none was). */
export function valueAt(events: readonly ScriptEvent[], key: string, at: Date): string | null {
  let value: string | null = null;
  let when = -Infinity;
  for (const e of events) {
    if (e.fact?.key !== key) continue;
    const t = e.at.getTime();
    if (t <= at.getTime() && t >= when) {
      value = e.fact.value;
      when = t;
    }
  }
  return value;
}

/** Sorted by time (stable), so a script is always replayed in order. */
export function inTimeOrder<T extends { at: Date }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => a.at.getTime() - b.at.getTime());
}

export const DAY_MS = 86_400_000;

/** Day `d` of a script, at `hour` UTC. */
export const dayOf = (start: Date, d: number, hour = 9): Date =>
  new Date(start.getTime() + d * DAY_MS + hour * 3_600_000);

/** A date as people write it in the questions (`2026-03-14`). */
export const isoDay = (d: Date): string => d.toISOString().slice(0, 10);
