/**
 * Qualifier drift on a superseding write (seed 002 §4: rewrites lose time and modality qualifiers round after
 * round). A correction that replaces a memory should carry the earlier memory's qualifiers forward; the kinds it
 * drops are returned so that the write can be flagged. Pure; kinds only, never the qualifiers' values.
 */
import { decompose, type QualifierKind } from './obligations.js';

const QUALIFIER_KINDS: readonly QualifierKind[] = ['time', 'negation', 'uncertainty', 'quantity'];

export function droppedQualifiers(earlierContent: string, laterContent: string): QualifierKind[] {
  const kinds = (content: string) => new Set(decompose(content).map((o) => o.kind));
  const earlier = kinds(earlierContent);
  const later = kinds(laterContent);
  return QUALIFIER_KINDS.filter((k) => earlier.has(k) && !later.has(k));
}
