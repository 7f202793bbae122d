/**
 * Failures of the search index, stripped of everything but the operation, the status and Elasticsearch's
 * error type. The client's own errors carry the request body and the server's reason text, which may hold
 * memory content; they are never re-thrown, attached as `cause` or logged.
 */
import { errors } from '@elastic/elasticsearch';

/** A failed search-index operation; `retryable` tells an activity whether another attempt can help. */
export class SearchIndexError extends Error {
  constructor(
    readonly operation: string,
    readonly status: number | null,
    readonly esType: string,
    readonly retryable: boolean,
    detail?: string,
  ) {
    super(
      `search index ${operation} failed: ${esType}${status === null ? '' : ` (${status})`}${detail ? `; ${detail}` : ''}`,
    );
    this.name = 'SearchIndexError';
  }
}

/** Elasticsearch's error type of a response error (`index_not_found_exception`, …), if any. */
export function esErrorType(error: unknown): string | undefined {
  if (!(error instanceof errors.ResponseError)) return undefined;
  const body: unknown = error.body;
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const inner: unknown = body.error;
  if (typeof inner === 'object' && inner !== null && 'type' in inner && typeof inner.type === 'string')
    return inner.type;
  return undefined;
}

export function isIndexNotFound(error: unknown): boolean {
  return esErrorType(error) === 'index_not_found_exception';
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Converts what the client throws into a `SearchIndexError` without content. */
export function toSearchIndexError(operation: string, error: unknown): SearchIndexError {
  if (error instanceof SearchIndexError) return error;
  if (error instanceof errors.ResponseError) {
    const status = error.meta.statusCode ?? null;
    return new SearchIndexError(
      operation,
      status,
      esErrorType(error) ?? 'response_error',
      status === null || isRetryableStatus(status),
    );
  }
  // Connection, timeout, no living connections, deserialisation…: transient from where we stand.
  return new SearchIndexError(operation, null, error instanceof Error ? error.name : 'unknown_error', true);
}

/** Runs one client call, translating its failure. */
export async function guarded<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // Only the client's errors carry request bodies; our own (validation, programming errors) pass through.
    if (error instanceof errors.ElasticsearchClientError) throw toSearchIndexError(operation, error);
    throw error;
  }
}
