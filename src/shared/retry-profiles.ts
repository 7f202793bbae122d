import type { ActivityOptions } from '@temporalio/common';
import { ErrorType } from './errors.js';

/** Permanent refusals: retrying cannot change the answer. */
export const PERMANENT_ERRORS = [
  ErrorType.Validation,
  ErrorType.NotFound,
  ErrorType.Forbidden,
  ErrorType.PolicyDenied,
  ErrorType.Tombstoned,
  ErrorType.LineageRefused,
  ErrorType.IllegalTransition,
  ErrorType.Conflict,
] as const;

/** Named activity option profiles; workflows pick one, never the default unlimited retry. */
export const RetryProfiles = {
  /** Short reads and checks. */
  quick: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '200 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '5 seconds',
      maximumAttempts: 5,
      nonRetryableErrorTypes: [...PERMANENT_ERRORS],
    },
  },
  /** Batched writes to the stores; idempotent, so retries are safe. */
  storeWrite: {
    startToCloseTimeout: '2 minutes',
    retry: {
      initialInterval: '500 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: 8,
      nonRetryableErrorTypes: [...PERMANENT_ERRORS],
    },
  },
  /** Long purges that heartbeat a cursor and resume where they stopped. */
  longPurge: {
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '30 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 10,
      nonRetryableErrorTypes: [...PERMANENT_ERRORS],
    },
  },
  /** Notifications: retried, but an unreachable mail server must not hold up the workflow for long. */
  notify: {
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 6 },
  },
} as const satisfies Record<string, ActivityOptions>;
