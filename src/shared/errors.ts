/** Stable error type strings: callers, workflows and tests branch on these, never on `instanceof`. */
export const ErrorType = {
  Validation: 'ValidationError',
  NotFound: 'NotFound',
  Unauthenticated: 'Unauthenticated',
  Forbidden: 'Forbidden',
  Conflict: 'Conflict',
  Tombstoned: 'Tombstoned',
  LineageRefused: 'LineageRefused',
  PolicyDenied: 'PolicyDenied',
  LegalHold: 'LegalHold',
  IllegalTransition: 'IllegalTransition',
  RateLimited: 'RateLimited',
  QuotaExceeded: 'QuotaExceeded',
  StorageQuotaExceeded: 'StorageQuotaExceeded',
  /** What was asked for existed and was erased on schedule (an access package after its delivery window). */
  Gone: 'Gone',
  /** A service Lethe depends on (the KMS) did not answer in time: nothing was done, and the same call may succeed later. */
  Unavailable: 'Unavailable',
  /**
   * Work that raced other writes too often to finish in this attempt (an access package whose records kept being
   * erased mid-build): nothing half-done was kept, and a later attempt, after the retry profile's backoff, may succeed.
   */
  Contended: 'Contended',
  /**
   * A C2SP witness refused to cosign a checkpoint (it does not know the log or its key, the proof did not join the
   * tree it saw, or it has seen a different tree) or answered with no valid cosignature: nothing was cosigned.
   */
  WitnessRefused: 'WitnessRefused',
} as const;
export type ErrorTypeName = (typeof ErrorType)[keyof typeof ErrorType];

const STATUS: Record<ErrorTypeName, number> = {
  ValidationError: 400,
  NotFound: 404,
  Unauthenticated: 401,
  Forbidden: 403,
  Conflict: 409,
  Tombstoned: 409,
  LineageRefused: 422,
  PolicyDenied: 403,
  LegalHold: 409,
  IllegalTransition: 409,
  RateLimited: 429,
  QuotaExceeded: 429,
  StorageQuotaExceeded: 413,
  Gone: 410,
  Unavailable: 503,
  Contended: 503,
  WitnessRefused: 502,
};

/** A refusal the caller can act on; its message names the field and never carries personal data. */
export class DomainError extends Error {
  constructor(
    readonly type: ErrorTypeName,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = type;
  }
  get status(): number {
    return STATUS[this.type];
  }
  get code(): string {
    return this.type;
  }
}

export function validationError(field: string, message: string): DomainError {
  return new DomainError(ErrorType.Validation, `${field}: ${message}`, field);
}
