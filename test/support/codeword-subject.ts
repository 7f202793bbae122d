import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { sampleEvent, sampleMemory } from './samples.js';

export interface CodewordSubject {
  eventIds: string[];
  memoryIds: string[];
  /** Another subject's event and memory, written beside it, that an erasure of the subject must leave. */
  control: { eventId: string; memoryId: string };
}

/**
 * A subject of `count` facts, each extracted from an event of its own and each holding `canary`, written through the
 * API in one batch (all active); then one event and memory of another subject holding `keep`.
 */
export async function writeCodewordSubject(
  app: TestApp,
  options: {
    tenant: string;
    token: string;
    subject: string;
    canary: string;
    keep: string;
    count: number;
    /** How the i-th order is named in its content and attribute. */
    label?: (i: number) => string;
  },
): Promise<CodewordSubject> {
  const { tenant, token, subject, canary, keep, count } = options;
  const label = options.label ?? String;
  const batch = async (payload: object) => {
    const written = await app.request({ method: 'POST', url: `/v1/tenants/${tenant}/batches`, token, payload });
    expect(written.statusCode, written.body).toBe(201);
    return written.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
  };
  const subjectBatch = await batch({
    events: Array.from({ length: count }, (_, i) =>
      sampleEvent({
        subjects: [subject],
        content: `Order ${label(i)}: the customer gave the codeword ${canary} on the phone.`,
      }),
    ),
    memories: Array.from({ length: count }, (_, i) =>
      sampleMemory({
        subjects: [subject],
        kind: 'fact',
        attribute: `order-${label(i)}`,
        content: `Order ${label(i)}: the customer's codeword is ${canary}.`,
        provenance: { eventIds: [`#${i}`], parentIds: [], derivationRule: 'extract-fact' },
      }),
    ),
  });
  expect(subjectBatch.memories.filter((m) => m.status !== 'active')).toEqual([]);
  const eventIds = subjectBatch.events.map((e) => e.id);
  const memoryIds = subjectBatch.memories.map((m) => m.id);
  expect(new Set([...eventIds, ...memoryIds]).size).toBe(2 * count);
  const controlBatch = await batch({
    events: [sampleEvent({ subjects: ['subject-kept'], content: `Ben's reference is ${keep}.` })],
    memories: [sampleMemory({ subjects: ['subject-kept'], content: `Ben's reference is ${keep}.` })],
  });
  return {
    eventIds,
    memoryIds,
    control: { eventId: controlBatch.events[0]!.id, memoryId: controlBatch.memories[0]!.id },
  };
}
