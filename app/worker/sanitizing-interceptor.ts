import { ApplicationFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { DomainError } from '../../src/shared/errors.js';
import { PERMANENT_ERRORS } from '../../src/shared/retry-profiles.js';
import { SearchIndexError } from '../../src/substrate/search/search-index-error.js';

/**
 * Activity failures are stored in workflow histories, and driver errors can quote the data they refused
 * (a document, a query). Failures from our own code are ApplicationFailures with safe messages and pass
 * through; anything else leaves as its name and error code only, keeping its retryability.
 */
export class SanitizingActivityInterceptor implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (error) {
      throw sanitize(error);
    }
  }
}

const permanent: ReadonlySet<string> = new Set(PERMANENT_ERRORS);

/**
 * Only a domain refusal is permanent (and only those of its types that retrying cannot change, e.g. not a
 * legal hold that may be released). Store and index failures keep their retryability: a 429, a 503 or a
 * timeout during a purge is retried, and exhausted retries park the erasure for an operator.
 */
export function sanitize(error: unknown): unknown {
  if (error instanceof ApplicationFailure) return error;
  if (error instanceof DomainError) {
    return ApplicationFailure.create({
      message: error.message,
      type: error.type,
      nonRetryable: permanent.has(error.type),
      // The field the refusal is about (a name, never a value), for the API to name when it answers.
      ...(error.field ? { details: [error.field] } : {}),
    });
  }
  if (error instanceof SearchIndexError) {
    // Its message names the operation, status and Elasticsearch's error type only (never a reason text).
    return ApplicationFailure.create({ message: error.message, type: error.name, nonRetryable: !error.retryable });
  }
  const e = error as { name?: string; code?: unknown; codeName?: string; type?: string; retryable?: boolean };
  if (e?.name === 'CancelledFailure' || e?.name === 'AbortError') return error;
  const type = e?.type ?? e?.name ?? 'Error';
  const code = e?.codeName ?? (e?.code !== undefined ? String(e.code) : undefined);
  return ApplicationFailure.create({
    message: `${type}${code ? ` (${code})` : ''}`,
    type,
    nonRetryable: e?.retryable === false,
  });
}
