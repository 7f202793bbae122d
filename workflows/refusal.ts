import { ApplicationFailure } from '@temporalio/workflow';
import type { ErrorTypeName } from '../src/shared/errors.js';

/**
 * An Update validator's refusal, typed so that the API maps it to its status (409, 403, 400) and names the field;
 * the message is shown to the caller as is, so it carries ids only, never content.
 */
export function refusal(type: ErrorTypeName, message: string, field: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, details: [field], nonRetryable: true });
}
