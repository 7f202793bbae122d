/**
 * Restriction of processing (GDPR Art. 18) and objection to purposes (Art. 21) as the API accepts and answers them:
 * the grounds the filing schema takes (the domain and the console read them from here, so a ground added here is
 * offered everywhere), what each ground means in a DPO's words, and a filed request as the API shows it.
 */

/** Art. 18(1)(a)–(d): accuracy contested, unlawful but not erased, kept for legal claims, objection pending. */
export const RESTRICTION_GROUNDS = ['art18-1a', 'art18-1b', 'art18-1c', 'art18-1d'] as const;
/** Art. 21(1) legitimate interests or public task, 21(2) direct marketing, 21(6) research or statistics. */
export const OBJECTION_GROUNDS = ['art21-1', 'art21-2', 'art21-6'] as const;

export type RestrictionGround = (typeof RESTRICTION_GROUNDS)[number] | (typeof OBJECTION_GROUNDS)[number];

/** Each ground's article and, in a sentence, when it applies. */
export const GROUND_EXPLANATIONS: Record<RestrictionGround, { article: string; when: string }> = {
  'art18-1a': {
    article: 'Art. 18(1)(a)',
    when: 'The subject contests the accuracy of the data, while the accuracy is being checked.',
  },
  'art18-1b': {
    article: 'Art. 18(1)(b)',
    when: 'The processing is unlawful, and the subject asks for restriction instead of erasure.',
  },
  'art18-1c': {
    article: 'Art. 18(1)(c)',
    when: 'The data is no longer needed, but the subject needs it kept for a legal claim.',
  },
  'art18-1d': {
    article: 'Art. 18(1)(d)',
    when: 'The subject has objected, while it is checked whether legitimate grounds override the objection.',
  },
  'art21-1': {
    article: 'Art. 21(1)',
    when: 'The subject objects to processing based on legitimate interests or a public task.',
  },
  'art21-2': {
    article: 'Art. 21(2)',
    when: 'The subject objects to processing for direct marketing (always to be honoured).',
  },
  'art21-6': {
    article: 'Art. 21(6)',
    when: 'The subject objects to processing for scientific or historical research or statistics.',
  },
};

/** A restriction or objection as the API shows it: the subject's keyed hash, never the subject; no reason. */
export interface RestrictionView {
  id: string;
  kind: 'restriction' | 'objection';
  subjectHash: string;
  /** null for a restriction (every context purpose). */
  purposes: string[] | null;
  /** Records derived from the subject's that the restriction follows (a count: they may be about others). */
  derived: number;
  legalGround: string;
  active: boolean;
  filedBy: string;
  filedAt: string;
  liftedBy: string | null;
  liftedAt: string | null;
}
