/**
 * Labels of the derivation audit and how they combine. Pure.
 *
 * An obligation is supported, contradicted, insufficient or ambiguous against its evidence (seed 002 App. B),
 * or unresolved when the check could not be completed: the retrieval budget left out passages that bear on it,
 * or the verifier timed out or failed. Unresolved is never read as unsupported, and never as supported.
 */
export const OBLIGATION_LABELS = ['supported', 'contradicted', 'insufficient', 'ambiguous', 'unresolved'] as const;
export type ObligationLabel = (typeof OBLIGATION_LABELS)[number];

/** A record's label over all its obligations; `repaired` is `supported` that needed evidence beyond the citations. */
export const RECORD_LABELS = [
  'supported',
  'repaired',
  'ambiguous',
  'unresolved',
  'unsupported',
  'contradicted',
] as const;
export type RecordLabel = (typeof RECORD_LABELS)[number];

/**
 * Worst first: contradicted > unsupported > unresolved > ambiguous > supported. A definite gap (insufficient
 * on the whole history searched) outranks "could not tell"; "could not tell" outranks a doubt the evidence itself
 * raises, since only the former may hide a contradiction.
 */
const SEVERITY: Record<ObligationLabel, number> = {
  contradicted: 4,
  insufficient: 3,
  unresolved: 2,
  ambiguous: 1,
  supported: 0,
};

const RECORD_OF: Record<ObligationLabel, Exclude<RecordLabel, 'repaired'>> = {
  contradicted: 'contradicted',
  insufficient: 'unsupported',
  unresolved: 'unresolved',
  ambiguous: 'ambiguous',
  supported: 'supported',
};

/** The record's label in one evidence view: the worst of its obligations' (none at all is unresolved). */
export function combineLabels(labels: readonly ObligationLabel[]): Exclude<RecordLabel, 'repaired'> {
  if (labels.length === 0) return 'unresolved';
  let worst: ObligationLabel = 'supported';
  for (const l of labels) if (SEVERITY[l] > SEVERITY[worst]) worst = l;
  return RECORD_OF[worst];
}

/**
 * The admission label from the two views: the expanded view decides, and a memory supported there but not on
 * its citations alone is provenance-repaired.
 */
export function admissionLabel(
  citationOnly: Exclude<RecordLabel, 'repaired'>,
  expanded: Exclude<RecordLabel, 'repaired'>,
): RecordLabel {
  if (expanded === 'supported' && citationOnly !== 'supported') return 'repaired';
  return expanded;
}

/** Whether a record with this label may be admitted without a human: supported or repaired only. */
export function admitsWithoutReview(label: RecordLabel): boolean {
  return label === 'supported' || label === 'repaired';
}
