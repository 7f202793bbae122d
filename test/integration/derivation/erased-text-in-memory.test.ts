/**
 * The derivation audit tokenises the history it ranks with BM25. Once the subject of that history is erased, no
 * copy of an erased text (or of its stems) may stay in the process that audited it: a heap snapshot of the
 * process (API and worker in one) is searched for the erased canary's bytes after the erasure completed.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { admitBatch, type StagedBatch } from '../../../src/ingestion/admit-batch.js';
import { EventInputSchema, MemoryInputSchema } from '../../../src/ingestion/write-schemas.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/** Where the bytes occur in a heap snapshot of this process (a full GC runs first), or -1. */
function heapOffsetOf(needle: Buffer): number {
  const file = path.join(os.tmpdir(), `lethe-heap-${process.pid}-${Date.now()}.heapsnapshot`);
  v8.writeHeapSnapshot(file);
  try {
    return fs.readFileSync(file).indexOf(needle);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * Admits an event holding the canary and a memory audited against it, by the admission the write path runs (not
 * through `inject`, whose request objects the harness keeps alive). Its own function: nothing of the batch stays
 * on the test's stack.
 */
async function admitHistory(tenant: string, subject: string, canary: Buffer): Promise<void> {
  const batch: StagedBatch = {
    roles: ['agent'],
    events: [
      // Not cited by the memory: it is in the audit's history pool, which BM25 ranks (and tokenises).
      EventInputSchema.parse(
        sampleEvent({
          subjects: [subject],
          content: `Ana said the depot locker code is ${canary.toString('latin1')}.`,
        }),
      ),
      EventInputSchema.parse(sampleEvent({ subjects: [subject], content: 'Ana visited the depot on Monday.' })),
    ],
    memories: [
      {
        ...MemoryInputSchema.parse(
          sampleMemory({
            subjects: [subject],
            attribute: 'depot-visit',
            content: 'Ana visited the depot on Monday.',
            provenance: { eventIds: ['#1'], parentIds: [], derivationRule: 'extract-fact' },
          }),
        ),
        id: `mem_${randomUUID()}`,
      },
    ],
  };
  const admitted = await admitBatch(app.services, tenant, 'agent-7', `stage_${randomUUID()}`, batch);
  expect(admitted.refused).toBeNull();
  expect(admitted.memories[0]?.derivation).toBeDefined();
}

describe('the derivation audit after an erasure', () => {
  it('keeps no erased history text or its stems in process memory', async () => {
    const tenant = uniqueTenant();
    const subject = 'subject-locker';
    // Held as bytes only: a string of it in this test would be found in the heap by the search below.
    const canary = Buffer.from(randomBytes(12).toString('hex'), 'latin1');
    await admitHistory(tenant, subject, canary);

    const requestId = await fileErasure(app, tenant, { subjectId: subject });
    await waitForState(app, tenant, requestId, ['completed']);

    expect(heapOffsetOf(canary)).toBe(-1);
  }, 120_000);
});
