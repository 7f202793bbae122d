import { noSuchRecord, type Refusal } from './refusal.js';

/** `events.3.subjects.0` → `events.3`: the item, not the part of it an erasure is about. */
function itemOf(field: string): string {
  return /^(?:events|memories)\.\d+/.exec(field)?.[0] ?? 'batch';
}

/**
 * The refusal as a caller sees it. An agent whose write is refused because of an erasure must not learn from the
 * refusal that the subject, the content or the record was erased (or is being erased): it could test guesses
 * that way. So without erasure rights, a citation of an erased record reads exactly as a citation of a record that
 * never existed, and any other erasure refusal as a conflict that names only the item and says to try again later.
 * The refusal itself remains one bit the caller sees (its write was not admitted); the audit log keeps the reason
 * for the tenant's DPO (`write.refused`).
 */
export function disclosedRefusal(refusal: Refusal, mayKnowOfErasures: boolean): Refusal {
  if (mayKnowOfErasures || !refusal.tellsOfErasure) return refusal;
  if (refusal.tellsOfErasure === 'cited-record') return noSuchRecord(refusal.field);
  const item = itemOf(refusal.field);
  return {
    type: 'Conflict',
    field: item,
    message: `${item}: not admitted now; submit it again later, or ask the tenant's DPO why it was refused`,
  };
}
