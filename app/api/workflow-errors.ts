import {
  ActivityFailure,
  ApplicationFailure,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { DomainError, ErrorType, type ErrorTypeName } from '../../src/shared/errors.js';

/** What a route tells a caller who lost to something that already happened to the workflow. */
export interface WorkflowCallContext {
  /** The request field the refusal is about (`decision`, `months`, `id`). */
  field: string;
  /** Said when the workflow has already finished, e.g. `review: decided by another reviewer`. */
  finished: string;
  /** Said when a start finds the workflow already running; defaults to `finished`. */
  alreadyStarted?: string;
}

/**
 * Refusals a workflow (its Update validators, or the activities its handlers run) raises on purpose, by type:
 * their messages are written for the caller and carry ids only, never content.
 */
const EXPECTED: ReadonlySet<string> = new Set<ErrorTypeName>([
  ErrorType.Conflict,
  ErrorType.NotFound,
  ErrorType.Forbidden,
  ErrorType.Validation,
  ErrorType.IllegalTransition,
  ErrorType.Tombstoned,
  ErrorType.LegalHold,
]);

/** The server's answer when an Update was accepted but the workflow completed before the Update did. */
const COMPLETED_BEFORE_UPDATE = 'AcceptedUpdateCompletedWorkflow';
const GRPC_NOT_FOUND = 5;

/**
 * The one mapping from Temporal client errors to API errors. An expected failure becomes a 4xx `DomainError`;
 * anything else is returned unchanged, so the error handler answers 500 with a request id and logs it.
 */
export function toApiError(error: unknown, context: WorkflowCallContext): unknown {
  if (error instanceof DomainError) return error;
  if (error instanceof WorkflowUpdateFailedError) {
    const failure = applicationFailureOf(error.cause);
    if (failure?.type === COMPLETED_BEFORE_UPDATE) return finished(context);
    if (failure?.type && EXPECTED.has(failure.type)) {
      const field = typeof failure.details?.[0] === 'string' ? failure.details[0] : context.field;
      return new DomainError(failure.type as ErrorTypeName, failure.message, field);
    }
    return error;
  }
  if (error instanceof WorkflowFailedError) {
    // A workflow whose activity ran out of retries against a service that stayed away (the key service): the
    // caller is told to come back later, as when the API itself meets it, not that something broke.
    const failure = applicationFailureOf(error.cause);
    if (failure?.type === ErrorType.Unavailable) {
      const field = typeof failure.details?.[0] === 'string' ? failure.details[0] : context.field;
      return new DomainError(ErrorType.Unavailable, failure.message, field);
    }
    return error;
  }
  if (error instanceof WorkflowNotFoundError || isCompletedWorkflow(error)) return finished(context);
  if (error instanceof WorkflowExecutionAlreadyStartedError) {
    return new DomainError(ErrorType.Conflict, context.alreadyStarted ?? context.finished, context.field);
  }
  return error;
}

/** Runs a start, signal or Update, and throws what `toApiError` makes of its failure. */
export async function callWorkflow<T>(context: WorkflowCallContext, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toApiError(error, context);
  }
}

function finished(context: WorkflowCallContext): DomainError {
  return new DomainError(ErrorType.Conflict, context.finished, context.field);
}

/** A validator's refusal is the cause itself; a handler's activity refusal sits under an ActivityFailure. */
function applicationFailureOf(cause: unknown): ApplicationFailure | undefined {
  if (cause instanceof ApplicationFailure) return cause;
  if (cause instanceof ActivityFailure && cause.cause instanceof ApplicationFailure) return cause.cause;
  return undefined;
}

/** Some calls surface "workflow execution already completed" as a ServiceError over a gRPC NOT_FOUND. */
function isCompletedWorkflow(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return false;
  const grpc = error.cause as { code?: number; details?: string } | undefined;
  return grpc?.code === GRPC_NOT_FOUND || /already completed/.test(grpc?.details ?? '');
}
