/**
 * One note per data subject, stated by an event of its own and carrying a canary word, written in one batch: for
 * tests that follow a subject's records through every read route (a canary in a response body means it was served).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { sampleEvent, sampleMemory } from './samples.js';

/** The records written about one subject, and the canary its note and event carry. */
export interface SubjectNote {
  memory: string;
  event: string;
  canary: string;
}

/** The batch that writes a note about each subject, every note containing `term` (what the tests search for). */
export function subjectNotesBatch<K extends string>(
  term: string,
  subjects: Record<K, string>,
): { payload: { events: object[]; memories: object[] }; canaries: Record<K, string> } {
  const events: object[] = [];
  const memories: object[] = [];
  const canaries = {} as Record<K, string>;
  for (const [name, subject] of Object.entries(subjects) as [K, string][]) {
    canaries[name] = `cn${name.slice(0, 3)}${randomUUID().slice(0, 8)}`;
    const said = `${term} delivery note ${canaries[name]}.`;
    events.push(sampleEvent({ subjects: [subject], content: `${said} Logged by phone.` }));
    memories.push(
      sampleMemory({
        subjects: [subject],
        kind: 'note',
        attribute: `note-${name}`,
        content: said,
        provenance: { eventIds: [`#${events.length - 1}`], parentIds: [], derivationRule: 'extract-note' },
      }),
    );
  }
  return { payload: { events, memories }, canaries };
}

/** The ids the batch's answer gave each subject's note and event; every note must be active (served). */
export function subjectNotesWritten<K extends string>(
  written: LightMyRequestResponse,
  canaries: Record<K, string>,
): Record<K, SubjectNote> {
  expect(written.statusCode, written.body).toBe(201);
  const body = written.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
  for (const m of body.memories) expect(m.status).toBe('active');
  const notes = {} as Record<K, SubjectNote>;
  (Object.keys(canaries) as K[]).forEach((name, i) => {
    notes[name] = { memory: body.memories[i]!.id, event: body.events[i]!.id, canary: canaries[name] };
  });
  return notes;
}
