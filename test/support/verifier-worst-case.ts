/**
 * A write at the deterministic verifier's worst case, as an agent could send it through the API: a memory of
 * claims joined by relations (just under the obligation budget), citing events that each repeat one sentence
 * mentioning every word of every claim, so each obligation is checked against every sentence (and pair of
 * sentences) of the evidence. Its cost grows with the evidence: about 7 ms of CPU per KiB on a small machine.
 */
import { MAX_CONTENT_BYTES } from '../../src/ingestion/write-schemas.js';

/** 21 claims joined by 21 relations: 63 obligations, under the budget of 64. */
export const WORST_CASE_MEMORY =
  Array.from({ length: 21 }, (_, i) => `Ana visited depot ${i} after she met Bob ${i} in Berlin`).join('. ') + '.';

const SENTENCE = 'Ana visited the depot after she met Bob in Berlin in May 2024 with three colleagues. ';

/** The most bytes of one event of such evidence: as large as an event may be. */
export const WORST_CASE_EVENT_BYTES = MAX_CONTENT_BYTES - 16;

/** Event contents of such evidence, as many as fit in `bytes` (so that a citation of all of them fits a cap). */
export function worstCaseEvidence(bytes: number): string[] {
  const repeats = Math.floor((WORST_CASE_EVENT_BYTES - 16) / SENTENCE.length);
  // Each event's content differs (an event is known by its content hash), by a clause the claims never cite.
  return Array.from(
    { length: Math.floor(bytes / WORST_CASE_EVENT_BYTES) },
    (_, i) => `${SENTENCE.repeat(repeats)}Note ${i}.`,
  );
}
