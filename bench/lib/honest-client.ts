/**
 * The abuse bench's honest client, in its own tenant: it writes a small batch (an event and the fact it states,
 * about a subject of its own), retrieves, and every `ERASE_EVERY` loops files an erasure of that loop's subject and
 * waits for it to complete. Each operation is timed as the client sees it. Only operations that did what the client
 * asked are timed: a refusal (a 429, a 401) is fast and would flatter the percentiles. Any other outcome than the
 * expected one is a failure, counted and named by status and state (never content), and not timed.
 */
import { honestBatch } from './abuse-payloads.js';
import { send } from './abuse-http.js';

export const ERASE_EVERY = 5;
const POLL_MS = 250;
/** An erasure not finished by then is a failure of the run, not a latency. */
const ERASURE_LIMIT_MS = 10 * 60_000;

export interface HonestIdentity {
  baseUrl: string;
  tenant: string;
  agentToken: string;
  dpoToken: string;
}

export interface HonestTimings {
  write: number[];
  retrieve: number[];
  erasure: number[];
  failures: string[];
}

/** Runs `fn`; its duration goes into `into` only if `succeeded` says the outcome is the one asked for. */
async function timed<T>(into: number[], fn: () => Promise<T>, succeeded: (value: T) => boolean): Promise<T> {
  const start = performance.now();
  const value = await fn();
  if (succeeded(value)) into.push(performance.now() - start);
  return value;
}

const activeMemory = (written: { status: number; body: string }) =>
  written.status === 201
    ? (JSON.parse(written.body) as { memories: { status: string; derivation?: string }[] }).memories[0]
    : undefined;

/** Files an erasure of `subject` and waits until it completed (deciding `extend` if it asks the DPO). */
async function erase(who: HonestIdentity, subject: string): Promise<string> {
  const base = `/v1/tenants/${who.tenant}/erasure-requests`;
  const filed = await send(who.baseUrl, {
    method: 'POST',
    path: base,
    token: who.dpoToken,
    body: { selector: { subjectId: subject }, legalGround: 'art17-1a' },
  });
  if (filed.status !== 202) return `erasure filed ${filed.status}`;
  const id = (JSON.parse(filed.body) as { id: string }).id;
  const limit = Date.now() + ERASURE_LIMIT_MS;
  let decided = false;
  while (Date.now() < limit) {
    const read = await send(who.baseUrl, { method: 'GET', path: `${base}/${id}`, token: who.dpoToken });
    const state = read.status === 200 ? (JSON.parse(read.body) as { state: string }).state : `status ${read.status}`;
    if (state === 'completed') return 'completed';
    if (state === 'needs-operator') return 'erasure needs-operator';
    if (state === 'needs-dpo' && !decided) {
      decided = true;
      const decision = await send(who.baseUrl, {
        method: 'POST',
        path: `${base}/${id}/findings`,
        token: who.dpoToken,
        body: { decision: 'extend', reason: 'bench: erase the copies found too' },
      });
      if (decision.status !== 202) return `erasure findings ${decision.status}`;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return 'erasure not finished';
}

/**
 * Loops until `until` (epoch ms; the loop under way finishes), and at least `loops` times; `label` keeps each
 * phase's subjects apart.
 */
export async function runHonestClient(
  who: HonestIdentity,
  label: string,
  until: number,
  loops = 0,
): Promise<HonestTimings> {
  const timings: HonestTimings = { write: [], retrieve: [], erasure: [], failures: [] };
  for (let n = 0; n < loops || Date.now() < until; n++) {
    const subject = `${label}-${n}`;
    const written = await timed(
      timings.write,
      () =>
        send(who.baseUrl, {
          method: 'POST',
          path: `/v1/tenants/${who.tenant}/batches`,
          token: who.agentToken,
          body: honestBatch(subject, n),
        }),
      (response) => activeMemory(response)?.status === 'active',
    );
    const memory = activeMemory(written);
    if (memory?.status !== 'active')
      timings.failures.push(`write ${written.status} ${memory?.status ?? ''} ${memory?.derivation ?? ''}`.trim());
    const retrieved = await timed(
      timings.retrieve,
      () =>
        send(who.baseUrl, {
          method: 'POST',
          path: `/v1/tenants/${who.tenant}/retrieve`,
          token: who.agentToken,
          body: { query: `where did the customer move (ticket ${n})` },
        }),
      (response) => response.status === 200,
    );
    if (retrieved.status !== 200) timings.failures.push(`retrieve ${retrieved.status}`);
    if (n % ERASE_EVERY === ERASE_EVERY - 1) {
      const outcome = await timed(
        timings.erasure,
        () => erase(who, subject),
        (result) => result === 'completed',
      );
      if (outcome !== 'completed') timings.failures.push(outcome);
    }
  }
  return timings;
}
