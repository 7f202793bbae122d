import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { auditDerivation } from '../../../src/governance/derivation/derivation-audit.js';
import { createDeterministicVerifier } from '../../../src/governance/derivation/deterministic-verifier.js';
import { evidenceViews } from '../../../src/governance/derivation/evidence-scope.js';
import type { DerivationVerifier, EvidencePassage } from '../../../src/governance/derivation/verifier.port.js';

const at = (day: number) => new Date(Date.UTC(2026, 10, day));
const passage = (id: string, text: string, day = 1): EvidencePassage => ({ id, text, at: at(day) });
const MEMORY = 'The user moved to Berlin because of the new job at Siemens.';
const options = { verifier: createDeterministicVerifier(), timeoutMs: 1_000 };

describe('the derivation audit of one memory', () => {
  it('repairs provenance: unsupported on the citations, supported with earlier history, the repairing ids recorded', async () => {
    const verdict = await auditDerivation(
      {
        content: MEMORY,
        cited: [passage('e1', 'I moved to Berlin.', 2)],
        pool: [
          passage('e2', 'I started a new job at Siemens.', 1),
          passage('e3', 'The Siemens job is why I moved.', 3),
          passage('e9', 'My cat likes tuna.', 3),
        ],
        before: at(5),
      },
      options,
    );
    expect(verdict).toMatchObject({
      label: 'repaired',
      citationOnly: 'unsupported',
      expanded: 'supported',
      repairedEvidenceIds: ['e2', 'e3'],
    });
    expect(verdict.evidenceIds).toEqual(['e2', 'e1', 'e3']); // time order, cited and retrieved unmarked
  });

  it('never uses a passage written after the memory', async () => {
    const verdict = await auditDerivation(
      {
        content: MEMORY,
        cited: [passage('e1', 'I moved to Berlin.', 2)],
        pool: [
          passage('e2', 'I started a new job at Siemens.', 1),
          passage('e3', 'The Siemens job is why I moved.', 9),
        ],
        before: at(5),
      },
      options,
    );
    expect(verdict.evidenceIds).not.toContain('e3');
    expect(verdict.label).toBe('unsupported');
    expect(verdict.obligations.find((o) => o.kind === 'relation')).toMatchObject({ label: 'insufficient' });
  });

  it('is unresolved, not unsupported, when the budget left out passages that bear on the gap', async () => {
    // 16 cited passages fill the budget: nothing is retrieved, and the pool still holds the link.
    const cited = Array.from({ length: 16 }, (_, i) =>
      passage(`c${i}`, i === 0 ? 'I moved to Berlin.' : 'I started a new job at Siemens.'),
    );
    const verdict = await auditDerivation(
      { content: MEMORY, cited, pool: [passage('e3', 'The Siemens job is why I moved to Berlin.')], before: at(5) },
      options,
    );
    expect(verdict).toMatchObject({ label: 'unresolved', unresolvedBecause: 'retrieval-budget' });
  });

  it('is unresolved when the verifier times out or answers for the wrong obligations, never allowed', async () => {
    const hanging: DerivationVerifier = { id: 'hang', version: '0', verify: () => new Promise(() => {}) };
    const wrong: DerivationVerifier = {
      id: 'wrong',
      version: '0',
      verify: () => Promise.resolve([{ obligationId: 'o99', label: 'supported', evidenceIds: [] }]),
    };
    const input = {
      content: MEMORY,
      cited: [passage('e1', 'I moved to Berlin because of my new job at Siemens.')],
      pool: [],
      before: at(5),
    };
    expect(await auditDerivation(input, { verifier: hanging, timeoutMs: 50 })).toMatchObject({
      label: 'unresolved',
      unresolvedBecause: 'timeout',
    });
    expect(await auditDerivation(input, { verifier: wrong, timeoutMs: 500 })).toMatchObject({
      label: 'unresolved',
      unresolvedBecause: 'verifier-error',
    });
    expect(await auditDerivation(input, options)).toMatchObject({ label: 'supported' });
  });

  it('keeps at most 12 retrieved and 16 passages in all, each view in time order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 30 }), (citedCount, poolCount) => {
        const cited = Array.from({ length: citedCount }, (_, i) => passage(`c${i}`, 'moved Berlin', (i % 28) + 1));
        const pool = Array.from({ length: poolCount }, (_, i) => passage(`p${i}`, `Berlin job ${i}`, (i % 28) + 1));
        const views = evidenceViews('moved to Berlin for a job', cited, pool, at(20));
        const retrieved = views.expanded.length - views.citationOnly.length;
        expect(retrieved).toBeLessThanOrEqual(12);
        expect(views.expanded.length).toBeLessThanOrEqual(Math.max(16, citedCount));
        expect(views.expanded.every((p) => p.id.startsWith('c') || p.at.getTime() <= at(20).getTime())).toBe(true);
        const times = views.expanded.map((p) => p.at.getTime());
        expect(times).toEqual([...times].sort((a, b) => a - b));
      }),
    );
  });

  it('holds ids, labels and counts only: no word of the memory or its evidence is in the verdict', async () => {
    const word = fc.stringMatching(/^[a-z]{9,14}$/);
    await fc.assert(
      fc.asyncProperty(fc.array(word, { minLength: 3, maxLength: 8 }), async (ws) => {
        const content = `The user ${ws.join(' ')}.`;
        const verdict = await auditDerivation(
          {
            content,
            cited: [passage('e1', `I ${ws.slice(1).join(' ')}.`)],
            pool: [passage('e2', `Then ${ws[0]} again.`)],
            before: at(5),
          },
          options,
        );
        const json = JSON.stringify(verdict);
        for (const w of ws) expect(json).not.toContain(w);
      }),
      { numRuns: 50 },
    );
  });
});
