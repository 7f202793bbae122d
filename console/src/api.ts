import type { Session } from './session.js';
import { sendRetryingClosedConnection } from '../../src/shared/closed-connection-retry.js';

/** An API refusal as the page shows it: status, the API's message (which names the field) and the field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field: string | null,
  ) {
    super(message);
  }
}

/** What a refusal means to the person reading it. */
export function explain(error: unknown): string {
  if (!(error instanceof ApiError) || error.field === 'network')
    return 'The API could not be reached. Check that the Lethe API is running.';
  if (error.status === 0) return error.message;
  if (error.status === 401) return `Not signed in (401): ${error.message}. Paste a fresh token.`;
  if (error.status === 403) return `Not allowed for this token (403): ${error.message}.`;
  return `${error.message} (${error.status})`;
}

interface CallOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  /** A write's key: sent as `Idempotency-Key`, it makes the write safe to send again after a closed connection. */
  idempotencyKey?: string;
}

/** A call to the tenant's API: `/v1/tenants/{tenant}{path}`, with the token as a bearer header. */
async function call(session: Session, path: string, options: CallOptions = {}): Promise<Response> {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined && v !== '') query.set(k, String(v));
  const url = `/v1/tenants/${encodeURIComponent(session.tenant)}${path}${query.size ? `?${query}` : ''}`;
  const method = options.method ?? 'GET';
  const send = () =>
    fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${session.token}`,
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      cache: 'no-store',
    });
  // Reads, and writes under a key, are sent once more if a kept-alive connection closed under them.
  const repeatable = method === 'GET' || options.idempotencyKey !== undefined;
  let response: Response;
  try {
    response = await (repeatable ? sendRetryingClosedConnection(send) : send());
  } catch {
    throw new ApiError(0, 'the API could not be reached', 'network');
  }
  if (!response.ok) {
    let message = `request failed`;
    let field: string | null = null;
    try {
      const body = (await response.json()) as { error?: { message?: string; field?: string } };
      message = body.error?.message ?? message;
      field = body.error?.field ?? null;
    } catch {
      // not JSON: keep the generic message
    }
    throw new ApiError(response.status, message, field);
  }
  return response;
}

export async function getJson<T>(session: Session, path: string, query?: CallOptions['query']): Promise<T> {
  return (await call(session, path, query ? { query } : {})).json() as Promise<T>;
}

export async function getText(session: Session, path: string, query?: CallOptions['query']): Promise<string> {
  return (await call(session, path, query ? { query } : {})).text();
}

/** `idempotencyKey`: for a write the API answers once per key (a filing's `requestKey`, a batch's header). */
export async function postJson<T>(session: Session, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  return (
    await call(session, path, { method: 'POST', body: body ?? {}, ...(idempotencyKey ? { idempotencyKey } : {}) })
  ).json() as Promise<T>;
}
