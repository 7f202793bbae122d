/**
 * A deletion certificate with its place in the tenant's audit log, as an auditor receives one certificate: checked
 * with the certificate key and the log's verifier key alone, without the chain.
 *
 * The anchor sits beside the signed certificate, not inside its body: the audit entry records the certificate's
 * hash, the leaf is the entry's hash, and the checkpoint signs a root over that leaf, so a body holding its own
 * anchor would have to hold a hash of itself. It is bound all the same: the verifier recomputes the certificate's
 * hash, finds it in the entry (`details.certificateHash`, with its id, seq and tenant), recomputes the entry's hash
 * from the entry's canonical form (ids and hashes only), the leaf from it, the root from the leaf and the proof, and
 * opens the checkpoint under the log key.
 */
import type { AuditEntry } from '../audit/audit-log.port.js';
import {
  placeOf,
  verifyLogAnchor,
  type AnchoredPlace,
  type AnchorPart,
  type LaterCheckpoint,
  type LogAnchor,
} from '../audit/log-tree/log-anchor.js';
import { CERTIFICATE_ANCHOR_ACTION, type DeletionCertificate } from './certificate.js';
import { describeBadSeal, verificationKeys } from './certificate-verify.js';

export const ANCHORED_CERTIFICATE_KIND = 'lethe.anchored-certificate';

export interface AnchoredCertificate {
  kind: typeof ANCHORED_CERTIFICATE_KIND;
  version: 1;
  certificate: DeletionCertificate;
  logAnchor: LogAnchor;
}

export function anchoredCertificate(certificate: DeletionCertificate, anchor: LogAnchor): AnchoredCertificate {
  return { kind: ANCHORED_CERTIFICATE_KIND, version: 1, certificate, logAnchor: anchor };
}

export function isAnchoredCertificate(value: unknown): value is AnchoredCertificate {
  return (
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === ANCHORED_CERTIFICATE_KIND
  );
}

/** Which part failed: the certificate itself, or a link of its anchor. */
export type AnchoredPart = 'certificate' | AnchorPart;

export type AnchoredVerdict =
  | ({ ok: true; certificateId: string; tenant: string; keyId: string } & AnchoredPlace)
  | { ok: false; part: AnchoredPart; reason: string };

/**
 * The certificate's seal (hash, signature, body), that the anchor's entry records it, and the anchor itself under
 * the log key (and against a later checkpoint when one is given). Names the first part that fails.
 */
export async function verifyAnchoredCertificate(
  value: unknown,
  options: { publicKeys: string | readonly string[]; logKey: string; later?: LaterCheckpoint },
): Promise<AnchoredVerdict> {
  if (!isAnchoredCertificate(value))
    return { ok: false, part: 'anchor', reason: `not an anchored certificate (kind ${ANCHORED_CERTIFICATE_KIND})` };
  const bad = describeBadSeal(value.certificate, verificationKeys(options.publicKeys));
  if (bad) return { ok: false, part: 'certificate', reason: bad };
  const certificate = value.certificate;
  const verdict = await verifyLogAnchor(value.logAnchor, {
    logKey: options.logKey,
    binds: (entry) => describeUnrecorded(entry, certificate),
    ...(options.later ? { later: options.later } : {}),
  });
  if (!verdict.ok) return verdict;
  return {
    ok: true,
    certificateId: certificate.certificateId,
    tenant: certificate.tenant,
    keyId: certificate.keyId,
    ...placeOf(verdict, value.logAnchor),
  };
}

/** Why the entry is not the one recording this certificate, or null. */
function describeUnrecorded(entry: AuditEntry, certificate: DeletionCertificate): string | null {
  if (entry.action !== CERTIFICATE_ANCHOR_ACTION)
    return `the anchored entry is a ${entry.action} entry, not ${CERTIFICATE_ANCHOR_ACTION}`;
  if (entry.tenant !== certificate.tenant) return `the anchored entry is of tenant ${entry.tenant}`;
  if (entry.target !== certificate.certificateId) return `the anchored entry records certificate ${entry.target}`;
  if (entry.details.certificateHash !== certificate.hash || entry.details.certificateSeq !== certificate.seq)
    return "the anchored entry records another hash or seq than the certificate's";
  return null;
}
