/**
 * A rights receipt with its place in the audit log, checked with the certificate key and the log's verifier key
 * alone. The receipt's signed body already names its entry (seq and hash); the anchor beside it brings that entry
 * whole, a checkpoint signed as the receipt was issued and the entry's inclusion proof, so no chain export is needed.
 * It sits beside the body rather than in it so that receipts signed before anchors existed keep their signature.
 *
 * An access package is anchored through its receipt: the package's signed digest is the `packageSha256` of the same
 * entry, so a package checks against the anchored receipt of its request.
 */
import type { KeyObject } from 'node:crypto';
import {
  placeOf,
  verifyLogAnchor,
  type AnchoredPlace,
  type AnchorPart,
  type LaterCheckpoint,
  type LogAnchor,
} from '../audit/log-tree/log-anchor.js';
import { verifyAccessPackage } from './access-request.js';
import { verifyReceipt, type RightsReceipt } from './receipt.js';

export const ANCHORED_RECEIPT_KIND = 'lethe.anchored-rights-receipt';

export interface AnchoredReceipt {
  kind: typeof ANCHORED_RECEIPT_KIND;
  version: 1;
  receipt: RightsReceipt;
  logAnchor: LogAnchor;
}

export function anchoredReceipt(receipt: RightsReceipt, anchor: LogAnchor): AnchoredReceipt {
  return { kind: ANCHORED_RECEIPT_KIND, version: 1, receipt, logAnchor: anchor };
}

export function isAnchoredReceipt(value: unknown): value is AnchoredReceipt {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === ANCHORED_RECEIPT_KIND;
}

export type AnchoredReceiptVerdict =
  | ({
      ok: true;
      requestId: string;
      right: string;
      tenant: string;
      keyId: string;
      /** When a package was given: its signed digest, as the anchored entry records it. */
      packageSha256?: string;
    } & AnchoredPlace)
  | { ok: false; part: 'receipt' | 'package' | AnchorPart; reason: string };

/**
 * The receipt's signature, that the anchor's entry is the one its body names (seq, hash, action, request, tenant),
 * the anchor under the log key (and a later checkpoint), and, given an access package, that the entry records the
 * package's signed digest and the package's signature holds.
 */
export async function verifyAnchoredReceipt(
  value: unknown,
  options: { publicKeys: readonly KeyObject[]; logKey: string; later?: LaterCheckpoint; accessPackage?: unknown },
): Promise<AnchoredReceiptVerdict> {
  if (!isAnchoredReceipt(value))
    return { ok: false, part: 'anchor', reason: `not an anchored receipt (kind ${ANCHORED_RECEIPT_KIND})` };
  const { receipt } = value;
  const signed = verifyReceipt(receipt, options.publicKeys);
  if (!signed.ok) return { ok: false, part: 'receipt', reason: signed.reason };
  const verdict = await verifyLogAnchor(value.logAnchor, {
    logKey: options.logKey,
    binds: (entry) => {
      const bound = verifyReceipt(receipt, options.publicKeys, [entry]);
      return bound.ok ? null : bound.reason;
    },
    ...(options.later ? { later: options.later } : {}),
  });
  if (!verdict.ok) return verdict;
  let packageSha256: string | undefined;
  if (options.accessPackage !== undefined) {
    const pkg = verifyAccessPackage(options.accessPackage, options.publicKeys);
    if (!pkg.ok) return { ok: false, part: 'package', reason: pkg.reason };
    const digest = (options.accessPackage as { signature: { bodySha256: string } }).signature.bodySha256;
    const recorded = value.logAnchor.entry.details.packageSha256;
    if (receipt.right !== 'access' || recorded !== digest)
      return { ok: false, part: 'package', reason: "the anchored entry does not record this package's signed digest" };
    packageSha256 = digest;
  }
  return {
    ok: true,
    requestId: receipt.requestId,
    right: receipt.right,
    tenant: receipt.tenant,
    keyId: signed.keyId,
    ...placeOf(verdict, value.logAnchor),
    ...(packageSha256 ? { packageSha256 } : {}),
  };
}
