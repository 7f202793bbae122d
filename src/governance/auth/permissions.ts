import type { Role } from './principal.js';

/**
 * The coarse role gate every tenant-scoped action passes first; json-logic policies (policies/) decide
 * the finer questions after it.
 */
export const ACTION_ROLES = {
  'event.ingest': ['agent', 'admin'],
  'event.read': ['agent', 'dpo', 'legal', 'auditor', 'admin'],
  'memory.write': ['agent', 'admin'],
  /** A consolidation run over the caller's own memories (agents), or over the tenant's shared ones (admins). */
  'memory.consolidate': ['agent', 'admin'],
  'memory.read': ['agent', 'reviewer', 'dpo', 'legal', 'admin'],
  'memory.search': ['agent', 'reviewer', 'admin'],
  'memory.retrieve': ['agent', 'reviewer', 'dpo', 'legal', 'admin'],
  'exposure.report': ['agent', 'admin'],
  'exposure.read': ['dpo', 'auditor', 'admin'],
  'audit.export': ['auditor', 'dpo', 'admin'],
  'erasure.request': ['dpo', 'admin'],
  'erasure.read': ['dpo', 'auditor', 'admin'],
  'hold.manage': ['legal', 'admin'],
  /** Restrictions (Art. 18) and objections (Art. 21): the subject-restrictions policy narrows both further. */
  'restriction.manage': ['dpo', 'admin'],
  'restriction.read': ['dpo', 'legal', 'auditor', 'admin'],
  /** Access and portability (Art. 15, 20): the subject-access policy narrows each further. */
  'access.request': ['dpo'],
  'access.read': ['dpo', 'legal', 'auditor', 'admin'],
  'access.download': ['dpo'],
  /** Rectification (Art. 16): the DPO files, a reviewer decides; the subject-rectification policy narrows each. */
  'rectification.request': ['dpo'],
  'rectification.read': ['dpo', 'legal', 'auditor', 'reviewer', 'admin'],
  'rectification.decide': ['reviewer'],
  /** The proposed content of an open correction: for the reviewer who decides it and the DPO who filed it. */
  'rectification.proposal': ['reviewer', 'dpo'],
  /** A closed request's signed receipt: ids, states, dates and counts, for whoever answers for the request. */
  'receipt.read': ['dpo', 'legal', 'auditor', 'admin'],
  'certificate.export': ['auditor', 'dpo', 'admin'],
  'review.decide': ['reviewer'],
  'review.read': ['reviewer', 'admin'],
  'index.reembed': ['admin'],
  /** Dependencies and schedules in detail (they name internal hosts): for operators. */
  'readiness.read': ['admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Action = keyof typeof ACTION_ROLES;

export function roleAllows(roles: readonly Role[], action: Action): boolean {
  const allowed: readonly Role[] = ACTION_ROLES[action];
  return roles.some((role) => allowed.includes(role));
}
