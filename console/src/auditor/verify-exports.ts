/**
 * In-browser verification with the same verifier as `lethe verify` (src/governance/certificates/certificate-verify.ts,
 * bundled as it is); its signature checks are answered by WebCrypto Ed25519 (see verification-key.browser.ts).
 */
import {
  verifyCertificatesJsonl,
  type CertificateVerification,
} from '../../../src/governance/certificates/certificate-verify.js';
import { checkSignatures } from '../verify/verification-key.browser.js';

export interface ExportsToVerify {
  certificates: string;
  audit: string;
  publicKeyPem: string;
  from?: Date;
  to?: Date;
}

export async function verifyExports(input: ExportsToVerify): Promise<CertificateVerification | { empty: true }> {
  const lines = input.certificates.split('\n').filter((l) => l.trim() !== '');
  // As `lethe verify`: an empty export proves nothing.
  if (lines.length === 0) return { empty: true };
  await checkSignatures([input.publicKeyPem], lines);
  return verifyCertificatesJsonl(
    { certificates: input.certificates, audit: input.audit },
    {
      publicKeys: [input.publicKeyPem],
      ...(input.from ? { from: input.from } : {}),
      ...(input.to ? { to: input.to } : {}),
    },
  );
}
