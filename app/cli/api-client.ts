import { CliError, ExitCode, exitCodeForStatus } from './exit-codes.js';
import { sendRetryingClosedConnection } from '../../src/shared/closed-connection-retry.js';

/** Options of a write: its `Idempotency-Key`, which also makes it safe to send again after a closed connection. */
export interface WriteOptions {
  idempotencyKey?: string;
}

/** A thin HTTP client for the Lethe API; errors become one-line CLI errors with a meaningful exit code. */
export function createApiClient(baseUrl: string, token: string | undefined) {
  /** Reads, and writes under a key, are sent once more if a kept-alive connection closed under them. */
  async function send(method: string, path: string, body?: unknown, options: WriteOptions = {}): Promise<Response> {
    const { idempotencyKey } = options;
    const request = () =>
      fetch(new URL(path, baseUrl), {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const repeatable = method === 'GET' || idempotencyKey !== undefined;
    try {
      return await (repeatable ? sendRetryingClosedConnection(request) : request());
    } catch {
      throw new CliError(
        `cannot reach the Lethe API at ${baseUrl} (set LETHE_API_URL or start it: npm run api)`,
        ExitCode.unavailable,
      );
    }
  }

  async function call<T>(method: string, path: string, body?: unknown, options?: WriteOptions): Promise<T> {
    const response = await send(method, path, body, options);
    const text = await response.text();
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try {
        const parsed = JSON.parse(text) as { error?: { message?: string } };
        if (parsed.error?.message) message = parsed.error.message;
      } catch {
        // not JSON: keep the status line
      }
      throw new CliError(message, exitCodeForStatus(response.status));
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }
  return {
    get: <T>(path: string) => call<T>('GET', path),
    post: <T>(path: string, body: unknown, options?: WriteOptions) => call<T>('POST', path, body, options),
    async getText(path: string): Promise<string> {
      const response = await send('GET', path);
      if (!response.ok)
        throw new CliError(`${response.status} ${response.statusText}`, exitCodeForStatus(response.status));
      return response.text();
    },
  };
}
export type ApiClient = ReturnType<typeof createApiClient>;
