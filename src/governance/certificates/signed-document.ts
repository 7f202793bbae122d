/**
 * A JSON document signed whole: an Ed25519 signature over the RFC 8785 form of everything but the signature, with
 * that form's SHA-256 beside it. Access packages and rights receipts are such documents; an auditor checks them
 * offline with the certificate key. Pure code.
 */
import type { KeyObject } from 'node:crypto';
import { canonicalJson } from '../../shared/canonical-json.js';
import { sha256Hex } from '../../shared/sha256.js';
import { verifySignature, type CertificateSigner } from './signing.js';

export interface DocumentSignature {
  alg: 'Ed25519';
  keyId: string;
  bodySha256: string;
  value: string;
}

export type Signed<B> = B & { signature: DocumentSignature };

export function signDocument<B extends object>(body: B, signer: CertificateSigner): Signed<B> {
  const canonical = canonicalJson(body);
  return {
    ...body,
    signature: {
      alg: 'Ed25519',
      keyId: signer.keyId,
      bodySha256: sha256Hex(canonical),
      value: signer.sign(new TextEncoder().encode(canonical)),
    },
  };
}

export type DocumentVerification = { ok: true; keyId: string } | { ok: false; reason: string };

/**
 * The body hashes to the digest the signature names, and the signature verifies under one of the keys: any edit of
 * the body fails. `what` names the document in the reasons.
 */
export function verifyDocument(value: object, publicKeys: readonly KeyObject[], what: string): DocumentVerification {
  const { signature, ...body } = value as { signature?: Partial<DocumentSignature> };
  if (!signature || typeof signature.value !== 'string' || typeof signature.bodySha256 !== 'string')
    return { ok: false, reason: `unsigned: the ${what} has no signature` };
  let canonical: string;
  try {
    canonical = canonicalJson(body);
  } catch {
    return { ok: false, reason: `the ${what} body is not canonical JSON` };
  }
  if (sha256Hex(canonical) !== signature.bodySha256)
    return { ok: false, reason: 'the body does not hash to the signed digest: it was changed after signing' };
  const message = new TextEncoder().encode(canonical);
  if (!publicKeys.some((key) => verifySignature(key, message, signature.value!)))
    return { ok: false, reason: `the signature does not verify under the given key(s) (signed by ${signature.keyId})` };
  return { ok: true, keyId: String(signature.keyId) };
}
