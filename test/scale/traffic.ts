/**
 * HTTP calls to the API processes, each recorded with its outcome and when it was in flight, so that the test can
 * tell a refusal during an API's restart from one outside it, and report what every kind of call got.
 */
export interface CallRecord {
  op: string;
  api: number;
  startedAt: number;
  endedAt: number;
  /** The HTTP status, or null when no answer came (connection refused or cut, timeout). */
  status: number | null;
  /** For a call without an answer: the cause's code or name. */
  error: string | null;
}

export type Answer<T> = { ok: true; status: number; body: T } | { ok: false; status: number | null; text: string };

/** A period during which refusals from one API are expected (it was stopping or starting). */
export interface Window {
  api: number;
  from: number;
  to: number;
}

export class Traffic {
  readonly calls: CallRecord[] = [];

  constructor(private readonly baseUrl: (api: number) => string) {}

  /**
   * One call; never throws for an HTTP or network failure (the caller decides), and keeps the call's record. A 2xx
   * body is parsed as JSON unless `text` is set.
   */
  async send<T>(
    op: string,
    api: number,
    request: {
      method: 'GET' | 'POST';
      path: string;
      token: string;
      body?: unknown;
      timeoutMs?: number;
      text?: boolean;
    },
  ): Promise<Answer<T>> {
    const startedAt = Date.now();
    const record: CallRecord = { op, api, startedAt, endedAt: startedAt, status: null, error: null };
    this.calls.push(record);
    try {
      const response = await fetch(`${this.baseUrl(api)}${request.path}`, {
        method: request.method,
        headers: {
          authorization: `Bearer ${request.token}`,
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        signal: AbortSignal.timeout(request.timeoutMs ?? 120_000),
      });
      const text = await response.text();
      record.status = response.status;
      record.endedAt = Date.now();
      if (response.status >= 200 && response.status < 300)
        return { ok: true, status: response.status, body: (request.text ? text : JSON.parse(text)) as T };
      return { ok: false, status: response.status, text };
    } catch (error) {
      record.endedAt = Date.now();
      record.error = causeOf(error);
      return { ok: false, status: null, text: record.error };
    }
  }
}

/** `ECONNREFUSED`, `UND_ERR_SOCKET`, `TimeoutError`…: what a network failure was, without any payload. */
function causeOf(error: unknown): string {
  const e = error as { name?: string; code?: unknown; cause?: { code?: unknown; name?: string } };
  // The client's own deadline (AbortSignal.timeout) is a DOMException whose numeric code says nothing.
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  const code = e.cause?.code ?? e.code;
  return typeof code === 'string' ? code : (e.cause?.name ?? e.name ?? 'error');
}

/** Whether a call was in flight at any moment of a window of its API. */
export function inWindow(call: CallRecord, windows: readonly Window[]): boolean {
  return windows.some((w) => w.api === call.api && call.endedAt >= w.from && call.startedAt <= w.to);
}

/** What the calls of one kind got, as `status × count` (network failures by cause), most frequent first. */
export function outcomes(calls: readonly CallRecord[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) {
    const key = c.status === null ? `no answer (${c.error ?? 'still in flight'})` : String(c.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} × ${n}`)
    .join(', ');
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `task` over `items` with at most `limit` in flight; resolves when all are done, rejects on the first error. */
export async function inFlight<T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index]!, index);
    }
  });
  await Promise.all(lanes);
}
