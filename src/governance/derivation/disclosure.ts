/**
 * What a reader of a memory is told about its derivation audit when the memory was admitted without every
 * obligation supported by its citations: repaired from earlier history, signed off over an audit that was not
 * supported, or written while the audit only recorded. A flag and counts, never the obligations' wording. Pure.
 */
import type { DerivationAuditRecord } from '../../substrate/model/records.js';

export interface DerivationDisclosure {
  label: string;
  /** How it got past the audit: its support needed history beyond the citations, a reviewer's sign-off, or
   * the audit did not decide (`record` mode). */
  admittedBy: 'audit' | 'repair' | 'sign-off' | 'record-mode';
  obligations: number;
  /** Obligations not labelled supported. */
  notSupported: number;
  repairedEvidence: number;
  /** Kinds of qualifier this record dropped from the record it superseded. */
  qualifiersDropped?: string[];
}

export function derivationDisclosure(
  audit: DerivationAuditRecord | undefined,
  drift?: { dropped: string[] },
): DerivationDisclosure | null {
  if (!audit || (audit.label === 'supported' && !drift)) return null;
  const admittedBy =
    audit.label === 'supported'
      ? 'audit'
      : audit.label === 'repaired'
        ? 'repair'
        : audit.mode === 'record'
          ? 'record-mode'
          : 'sign-off';
  return {
    label: audit.label,
    admittedBy,
    obligations: audit.obligations.length,
    notSupported: audit.obligations.filter((o) => o.label !== 'supported').length,
    repairedEvidence: audit.repairedEvidenceIds.length,
    ...(drift ? { qualifiersDropped: drift.dropped } : {}),
  };
}
