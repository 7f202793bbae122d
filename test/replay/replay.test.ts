/**
 * A deploy must not break a workflow in flight: an erasure can wait for days under a hold or for the DPO's
 * decision, and the new code must carry it on from its history. Every history recorded from real runs
 * (`npm run replay:record`, into `histories/`) is replayed against the workflow code of this checkout; a change
 * that would make any of them non-deterministic fails here, and needs `patched()` (see docs/operations.md, deploying new workflow code).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { workflowBundlePath } from '../support/paths.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const HISTORIES = path.join(here, 'histories');

type History = temporal.api.history.v1.History;

function recorded(): { name: string; history: History }[] {
  return fs
    .readdirSync(HISTORIES)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      name: file.replace(/\.json$/, ''),
      history: temporal.api.history.v1.History.fromObject(
        JSON.parse(fs.readFileSync(path.join(HISTORIES, file), 'utf8')) as object,
      ),
    }));
}

/** The workflow types the worker registers: the exports of `workflows/index.ts`. */
function workflowTypes(): string[] {
  const index = fs.readFileSync(path.join(here, '..', '..', 'workflows', 'index.ts'), 'utf8');
  return [...index.matchAll(/export \{ (\w+) \}/g)].map((m) => m[1]!).sort();
}

describe('replaying recorded workflow histories against this code', () => {
  it('has a recorded history of every workflow type, the erasures that wait for people included', () => {
    const histories = recorded();
    const types = new Set(
      histories.map(
        (h) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown',
      ),
    );
    expect([...types].sort()).toEqual(workflowTypes());
    expect(histories.map((h) => h.name)).toEqual(
      expect.arrayContaining(['erasure-partial-under-hold', 'erasure-needs-dpo', 'erasure-completed']),
    );
  });

  it('hold no content: the payloads carry ids, keyed hashes and counts only', () => {
    // Words the recorded runs wrote as content, subjects or reasons.
    const written = [
      /card on file/i,
      /alice/i,
      /moved to Lisbon/i,
      /Prefers e-mail/i,
      /Lives in Porto/i,
      /Speaks Portuguese/i,
      /Salary is/i,
      /works at/i,
      /canary/i,
    ];
    for (const { name, history } of recorded()) {
      const payloads = JSON.stringify(history.toJSON()).match(/"data":"[A-Za-z0-9+/=]+"/g) ?? [];
      const text = payloads.map((p) => Buffer.from(p.slice(8, -1), 'base64').toString('utf8')).join('\n');
      expect(payloads.length, name).toBeGreaterThan(0);
      for (const word of written) expect(text, `${name}: ${word}`).not.toMatch(word);
    }
  });

  it('replays every one without non-determinism', async () => {
    const histories = recorded();
    const results: { name: string; error?: string }[] = [];
    const replays = Worker.runReplayHistories(
      { workflowBundle: { codePath: workflowBundlePath() } },
      histories.map(({ name, history }) => ({ workflowId: name, history })),
    );
    for await (const result of replays)
      results.push({ name: result.workflowId, ...(result.error ? { error: String(result.error.message) } : {}) });
    expect(results).toEqual(histories.map((h) => ({ name: h.name })));
  }, 180_000);
});
