/**
 * A workflow whose activity ran out of retries against the key service answers as the service being away (503,
 * naming the field), never as an internal error; any other failure stays a 500 for the error handler to log.
 */
import { describe, expect, it } from 'vitest';
import type { ApplicationFailure } from '@temporalio/common';
import { ActivityFailure, RetryState } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { toApiError } from '../../../app/api/workflow-errors.js';
import { sanitize } from '../../../app/worker/sanitizing-interceptor.js';
import { KekUnavailable } from '../../../src/substrate/crypto/key-encryption-keys.port.js';
import { DomainError } from '../../../src/shared/errors.js';

const context = { field: 'batch', finished: 'batch: already written' };

/** The client's error for a workflow failed by its activity's last failure, as the worker reports it. */
function failedBy(activityError: unknown): WorkflowFailedError {
  const failure = sanitize(activityError) as ApplicationFailure;
  const activity = new ActivityFailure(
    'Activity task failed',
    'admitStagedBatch',
    '1',
    RetryState.MAXIMUM_ATTEMPTS_REACHED,
    'worker',
    failure,
  );
  return new WorkflowFailedError('Workflow execution failed', activity, RetryState.NON_RETRYABLE_FAILURE);
}

describe('a workflow failed by an activity', () => {
  it('answers 503 naming the key service when the KMS stayed unavailable through every retry', () => {
    const mapped = toApiError(failedBy(new KekUnavailable('aws-kms', 'ThrottlingException')), context);
    expect(mapped).toBeInstanceOf(DomainError);
    expect(mapped).toMatchObject({ type: 'Unavailable', status: 503, field: 'kms' });
    expect((mapped as Error).message).toMatch(/key service \(aws-kms\) is unavailable \(ThrottlingException\)/);
  });

  it('leaves any other failure as it is (the error handler answers 500 and logs it)', () => {
    const other = failedBy(new Error('boom'));
    expect(toApiError(other, context)).toBe(other);
    const notFound = failedBy(new DomainError('NotFound', 'memory: not found', 'id'));
    expect(toApiError(notFound, context)).toBe(notFound);
  });

  it('carries a refusal’s field to the API, and nothing when it has none', () => {
    expect((sanitize(new KekUnavailable('aws-kms', 'x')) as ApplicationFailure).details).toEqual(['kms']);
    expect((sanitize(new DomainError('Conflict', 'c')) as ApplicationFailure).details ?? []).toEqual([]);
  });
});
