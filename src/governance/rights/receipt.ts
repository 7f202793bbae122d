/**
 * A rights receipt: what the data subject's request came to, signed with the certificate key and anchored in the
 * tenant's audit chain (the entry that recorded the request's closing step, by seq and hash), so that it is chained
 * like a certificate: an auditor checks the signature offline, and with an audit export that the anchor is an entry
 * of an intact chain. Ids, states, dates and counts only. Pure code.
 */
import type { KeyObject } from 'node:crypto';
import type { AuditEntry } from '../audit/audit-log.port.js';
import type { CertificateSigner } from '../certificates/signing.js';
import { signDocument, verifyDocument, type Signed } from '../certificates/signed-document.js';

export const RECEIPT_KIND = 'lethe.rights-receipt';

export interface RightsReceiptBody {
  kind: typeof RECEIPT_KIND;
  version: 1;
  tenant: string;
  right: 'access' | 'rectification';
  requestId: string;
  state: string;
  requester: string;
  receivedAt: string;
  dueAt: string;
  closedAt: string;
  /** What was done, as ids and counts (e.g. the corrected record's id, derived records flagged). */
  outcome: Record<string, string | number | null>;
  /** The audit entry that recorded the closing step: the receipt's place in the tenant's chain. */
  anchor: { auditSeq: number; auditHash: string; action: string };
}

export type RightsReceipt = Signed<RightsReceiptBody>;

export function issueReceipt(
  body: Omit<RightsReceiptBody, 'kind' | 'version' | 'anchor'>,
  anchor: Pick<AuditEntry, 'seq' | 'hash' | 'action'>,
  signer: CertificateSigner,
): RightsReceipt {
  return signDocument(
    {
      kind: RECEIPT_KIND,
      version: 1,
      ...body,
      anchor: { auditSeq: anchor.seq, auditHash: anchor.hash, action: anchor.action },
    },
    signer,
  );
}

export function isRightsReceipt(value: unknown): value is RightsReceipt {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === RECEIPT_KIND;
}

export type ReceiptVerification = { ok: true; keyId: string } | { ok: false; reason: string };

/**
 * The signature, and with the entries of an audit export (already checked as a chain), that the anchor is one of
 * them: the same seq, hash, action and request.
 */
export function verifyReceipt(
  value: unknown,
  publicKeys: readonly KeyObject[],
  audit?: readonly Pick<AuditEntry, 'seq' | 'hash' | 'action' | 'target' | 'tenant'>[],
): ReceiptVerification {
  if (!isRightsReceipt(value)) return { ok: false, reason: `not a rights receipt (kind ${RECEIPT_KIND})` };
  const verdict = verifyDocument(value, publicKeys, 'receipt');
  if (!verdict.ok || !audit) return verdict;
  const { anchor } = value;
  const entry = audit.find((e) => e.seq === anchor?.auditSeq);
  if (!entry) return { ok: false, reason: `its anchor (audit seq ${anchor?.auditSeq}) is not in the audit export` };
  if (entry.hash !== anchor.auditHash || entry.action !== anchor.action || entry.target !== value.requestId)
    return { ok: false, reason: `its anchor does not match audit entry seq ${entry.seq}` };
  if (entry.tenant !== value.tenant) return { ok: false, reason: 'its anchor is an entry of another tenant' };
  return verdict;
}
