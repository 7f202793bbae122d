/**
 * HTTP for `bench/abuse.bench.ts`: real requests to the bench's listener, a tally of the statuses hostile clients
 * get, and loops that keep a bounded number of requests in flight until a deadline (so a flood contends for the
 * server without growing without bound in the client).
 */

/** Statuses by client kind: `{ flood: { 200: 812, 429: 40 } }`; a request that failed before a status counts as 0. */
export type StatusTally = Record<string, Record<number, number>>;

export function countStatus(tally: StatusTally, kind: string, status: number): void {
  const byStatus = (tally[kind] ??= {});
  byStatus[status] = (byStatus[status] ?? 0) + 1;
}

export interface Request {
  method: 'GET' | 'POST';
  path: string;
  token?: string;
  body?: unknown;
}

/** Sends one request and reads its whole body; the status, or 0 when no response came. */
export async function send(baseUrl: string, request: Request): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: {
        ...(request.token ? { authorization: `Bearer ${request.token}` } : {}),
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

/** Keeps `inFlight` requests made by `next` going until `until` (epoch ms), counting their statuses as `kind`. */
export async function flood(
  baseUrl: string,
  tally: StatusTally,
  kind: string,
  inFlight: number,
  until: number,
  next: () => Request,
): Promise<void> {
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < until) countStatus(tally, kind, (await send(baseUrl, next())).status);
    }),
  );
}
