import type { FastifyError, FastifyInstance } from 'fastify';
import { DomainError } from '../../src/shared/errors.js';

/** What a 503 tells the caller to wait before trying again, in seconds. */
const UNAVAILABLE_RETRY_AFTER_S = 5;

/**
 * Every error leaves as `{ error: { code, message, field? } }` with a proper status; no stack traces and
 * no request data echoed back.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | DomainError | Error, request, reply) => {
    if (error instanceof DomainError) {
      // A dependency that did not answer: the same call may succeed shortly.
      if (error.status === 503) reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
      return reply.code(error.status).send({ error: { code: error.code, message: error.message, field: error.field } });
    }
    const fe = error as FastifyError;
    if (fe.validation) {
      const first = fe.validation[0];
      const field = validationField(first);
      // Patterns are implementation detail (and long); say what was expected instead.
      const message =
        first?.keyword === 'pattern' || first?.keyword === 'format'
          ? 'is not in the expected format'
          : (first?.message ?? 'invalid');
      return reply
        .code(400)
        .send({ error: { code: 'ValidationError', message: `${field ?? 'request'}: ${message}`, field } });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply.code(fe.statusCode).send({ error: { code: fe.code ?? 'bad_request', message: fe.message } });
    }
    request.log.error({ err: { type: error.name, code: fe.code }, requestId: request.id }, 'unhandled error');
    // The request id finds the log line; nothing of the error itself reaches the caller.
    return reply
      .code(500)
      .send({ error: { code: 'internal', message: `internal error (request ${request.id})`, requestId: request.id } });
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).send({ error: { code: 'not_found', message: 'no such route' } }),
  );
}

function validationField(
  issue: { instancePath?: string; params?: Record<string, unknown>; keyword?: string } | undefined,
): string | undefined {
  if (!issue) return undefined;
  const base = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const extra =
    (issue.params?.missingProperty as string | undefined) ?? (issue.params?.additionalProperty as string | undefined);
  return [base, extra].filter(Boolean).join('.') || undefined;
}
