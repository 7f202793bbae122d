/**
 * The deterministic verifier on its threads: the same verdicts as in process, and a view that runs past the CPU
 * deadline is stopped and leaves the audit unresolved while the event loop and the other threads keep serving.
 * Ordering and outcomes are asserted, never durations.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditDerivation, MAX_OBLIGATIONS } from '../../../src/governance/derivation/derivation-audit.js';
import { verifyDeterministically } from '../../../src/governance/derivation/deterministic-verifier.js';
import { decompose } from '../../../src/governance/derivation/obligations.js';
import { createThreadedVerifier } from '../../../src/governance/derivation/threaded-verifier.js';
import { VerifierDeadlineExceeded } from '../../../src/governance/derivation/verifier.port.js';

const at = new Date('2026-11-01T10:00:00Z');
const before = new Date('2026-12-01T00:00:00Z');
const HONEST = 'Ana moved to Berlin in May 2024 because she got a new job at Siemens.';
const honestEvidence = [{ id: 'e1', text: HONEST, at }];

/**
 * An evidence budget 32 times the default: an operator's choice that makes the deadline the only bound. The hostile
 * view below takes about 10 s of one core on Node 24 (a quarter of it at a megabyte: under the 3 s deadline on a
 * quiet machine), so the deadline, not the machine's load, decides.
 */
const LARGE_BUDGET = 4 * 1024 * 1024;

/**
 * The verifier's worst case within the obligation budget: claims joined by relations, each checked against every
 * sentence (and pair of sentences) of a megabyte of evidence that mentions all of their words.
 */
function hostile() {
  const content =
    Array.from({ length: 21 }, (_, i) => `Ana visited depot ${i} after she met Bob ${i} in Berlin`).join('. ') + '.';
  const sentence = 'Ana visited the depot after she met Bob in Berlin in May 2024 with three colleagues. ';
  const text = sentence.repeat(Math.floor(LARGE_BUDGET / 16 / sentence.length));
  const evidence = Array.from({ length: 16 }, (_, i) => ({ id: `h${i}`, text, at }));
  return { content, evidence };
}

// Three threads: the hostile audit's two views take two, the honest audit runs on the third.
const verifier = createThreadedVerifier({ deadlineMs: 3_000, threads: 3 });
afterAll(() => verifier.close());

describe('the deterministic verifier on worker threads', () => {
  it('gives the verdicts the in-process verifier gives', async () => {
    const obligations = decompose(HONEST);
    const signal = new AbortController().signal;
    // The three threads start (and load) here, so that the next test waits for no start-up.
    const [a, ...others] = await Promise.all(
      [1, 2, 3].map(() => verifier.verify(HONEST, obligations, honestEvidence, signal)),
    );
    expect(a).toEqual(verifyDeterministically(obligations, honestEvidence));
    expect(others).toEqual([a, a]);
  });

  it('stops a view at its deadline and leaves the audit unresolved, while an honest audit completes meanwhile', async () => {
    const { content, evidence } = hostile();
    const order: string[] = [];
    expect(decompose(content).length).toBeLessThanOrEqual(MAX_OBLIGATIONS);
    const options = { verifier, timeoutMs: 600_000, maxEvidenceBytes: LARGE_BUDGET };
    const hostileAudit = auditDerivation({ content, cited: evidence, pool: [], before }, options).then((v) => {
      order.push('hostile');
      return v;
    });
    // The event loop is free while the hostile view runs: this turn comes, and an honest audit is judged.
    await new Promise((resolve) => setImmediate(resolve));
    order.push('event loop turned');
    const honest = await auditDerivation({ content: HONEST, cited: honestEvidence, pool: [], before }, options);
    order.push('honest');
    const verdict = await hostileAudit;

    expect(honest.label).toBe('supported');
    expect(order).toEqual(['event loop turned', 'honest', 'hostile']);
    expect(verdict).toMatchObject({ label: 'unresolved', unresolvedBecause: 'timeout' });
    expect(verdict.obligations.every((o) => o.label === 'unresolved')).toBe(true);
  }, 120_000);

  it('reports the deadline as such to the caller, and serves the next view on a fresh thread', async () => {
    const { content, evidence } = hostile();
    const obligations = decompose(content);
    const signal = new AbortController().signal;
    await expect(verifier.verify(content, obligations, evidence, signal)).rejects.toBeInstanceOf(
      VerifierDeadlineExceeded,
    );
    const again = await verifier.verify(HONEST, decompose(HONEST), honestEvidence, signal);
    expect(again.every((v) => v.label === 'supported')).toBe(true);
  }, 120_000);
});
