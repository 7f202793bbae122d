import { ApplicationFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';

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

export function sanitize(error: unknown): unknown {
  if (error instanceof ApplicationFailure) return error;
  const e = error as { name?: string; code?: unknown; codeName?: string; type?: string; retryable?: boolean };
  if (e?.name === 'CancelledFailure' || e?.name === 'AbortError') return error;
  const type = e?.type ?? e?.name ?? 'Error';
  const code = e?.codeName ?? (e?.code !== undefined ? String(e.code) : undefined);
  // Our own domain errors carry safe, field-naming messages and stable types.
  if (e?.name && (error as { status?: number }).status !== undefined && typeof (error as Error).message === 'string') {
    return ApplicationFailure.create({ message: (error as Error).message, type, nonRetryable: true });
  }
  return ApplicationFailure.create({
    message: `${type}${code ? ` (${code})` : ''}`,
    type,
    nonRetryable: e?.retryable === false,
  });
}
