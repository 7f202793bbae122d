/**
 * The purpose each role reads for when it names none (`policies/memory-read.json` decides what each purpose
 * grants; `governance/read/reader.ts` resolves a reader from both).
 */
import type { Role } from '../auth/principal.js';

/** The purpose a reader acts for when it names none: the duty its role exists for. */
export const DUTY_PURPOSE: Readonly<Record<Role, string>> = {
  agent: 'support',
  reviewer: 'review',
  dpo: 'erasure',
  legal: 'legal-hold',
  admin: 'operations',
  auditor: 'audit',
};
