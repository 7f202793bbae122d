import { CliError, ExitCode, exitCodeForStatus } from './exit-codes.js';

/** A thin HTTP client for the Lethe API; errors become one-line CLI errors with a meaningful exit code. */
export function createApiClient(baseUrl: string, token: string | undefined) {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(new URL(path, baseUrl), {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch {
      throw new CliError(
        `cannot reach the Lethe API at ${baseUrl} (set LETHE_API_URL or start it: npm run api)`,
        ExitCode.unavailable,
      );
    }
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
    post: <T>(path: string, body: unknown) => call<T>('POST', path, body),
    async getText(path: string): Promise<string> {
      const response = await fetch(new URL(path, baseUrl), {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      }).catch(() => {
        throw new CliError(`cannot reach the Lethe API at ${baseUrl}`, ExitCode.unavailable);
      });
      if (!response.ok)
        throw new CliError(`${response.status} ${response.statusText}`, exitCodeForStatus(response.status));
      return response.text();
    },
  };
}
export type ApiClient = ReturnType<typeof createApiClient>;
