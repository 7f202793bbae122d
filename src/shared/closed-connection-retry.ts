/**
 * The race of a kept-alive connection: the server (or a balancer) closes it as idle just as the client, which has not
 * yet seen the close, sends a request on it. The request never reached the server and no answer came back, so sending
 * it once more on a fresh connection is safe for a read, and for a write the API recognises as a repeat by its
 * idempotency key. Nothing is retried once an answer arrived, whatever it said.
 */

/** Node's (undici's) codes for a connection that closed under a request, before its answer. */
const CLOSED_BEFORE_ANSWER = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** Whether `fetch` failed because its connection closed before any answer (not an abort, not a refused connection). */
export function closedBeforeAnswer(error: unknown): boolean {
  // `fetch` rejects with a TypeError only when no response came; an abort is a DOMException.
  if (!(error instanceof TypeError)) return false;
  const cause = (error as { cause?: unknown }).cause;
  // A browser says no more than that the request failed.
  if (cause === undefined) return true;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CLOSED_BEFORE_ANSWER.has(code);
}

/** Sends a request that is safe to repeat, and sends it once more if its connection closed before any answer. */
export async function sendRetryingClosedConnection(send: () => Promise<Response>): Promise<Response> {
  try {
    return await send();
  } catch (error) {
    if (!closedBeforeAnswer(error)) throw error;
    return send();
  }
}
