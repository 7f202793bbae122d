import { createHash, generateKeyPairSync } from 'node:crypto';

/**
 * A witness cosignature verifier key (C2SP tlog-cosignature: type 0x04, key id = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ key)[:4])
 * of a fresh key no one keeps: a witness an auditor names that never cosigned anything.
 */
export function cosignerKey(name = `stranger-${Math.random().toString(36).slice(2, 8)}`): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const typed = Buffer.concat([Buffer.of(0x04), publicKey.export({ format: 'der', type: 'spki' }).subarray(12)]);
  const keyId = createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), typed]))
    .digest()
    .subarray(0, 4);
  return `${name}+${keyId.toString('hex')}+${typed.toString('base64')}`;
}
