/**
 * Who may read memory content for which purpose (`policies/memory-read.json`), as the sensitivities a reader may
 * see. Pure: retrieval pushes the answer down into its index filters, so a denied record never fills a top-k slot.
 */
import type { Role } from '../auth/principal.js';
import { SENSITIVITIES, type Sensitivity } from '../../substrate/model/records.js';
import { evaluatePolicy, type PolicyDocument } from './evaluate.js';

/** The purpose a reader acts for when it names none: the duty its role exists for. */
export const DUTY_PURPOSE: Readonly<Record<Role, string>> = {
  agent: 'support',
  reviewer: 'review',
  dpo: 'erasure',
  legal: 'legal-hold',
  admin: 'operations',
  auditor: 'audit',
};

export interface ReadAccess {
  purpose: string;
  sensitivities: Sensitivity[];
  policy: { id: string; version: number };
}

/** The sensitivities these roles may read for `purpose` (the role's duty when absent); empty means denied. */
export function readAccess(policy: PolicyDocument, roles: readonly Role[], purpose?: string): ReadAccess {
  const purposes = purpose !== undefined ? [purpose] : [...new Set(roles.map((r) => DUTY_PURPOSE[r]))];
  const sensitivities = SENSITIVITIES.filter((sensitivity) =>
    purposes.some((p) => evaluatePolicy(policy, { roles: [...roles], purpose: p, sensitivity }).outcome === 'allow'),
  );
  return {
    purpose: purposes.join(','),
    sensitivities,
    policy: { id: policy.id, version: policy.version },
  };
}
