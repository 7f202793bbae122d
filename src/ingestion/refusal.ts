import type { ErrorTypeName } from '../shared/errors.js';

/** Why a batch was refused: the field, a stable type, and a message without personal data. */
export interface Refusal {
  type: ErrorTypeName;
  field: string;
  message: string;
  /** The policy that refused, when one did. */
  policy?: { id: string; version: number; rule: string };
  /**
   * Set when the refusal tells of an erasure (done or running): only callers with erasure rights see it as it is
   * (see `refusal-disclosure.ts`); `cited-record` is a citation of an erased record.
   */
  tellsOfErasure?: 'record' | 'cited-record';
}

/** A citation of a record the tenant does not hold. An erased record's citation reads the same to most callers. */
export function noSuchRecord(field: string): Refusal {
  return { type: 'LineageRefused', field, message: `${field}: no such record in this tenant` };
}
