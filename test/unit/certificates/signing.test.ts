import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/config/config.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import {
  certificateBody,
  chainCertificate,
  hashCertificate,
  nextLink,
} from '../../../src/governance/certificates/certificate.js';
import {
  keyIdOf,
  loadSigningKey,
  parsePublicKeyPem,
  verifySignature,
} from '../../../src/governance/certificates/signing.js';
import { sampleInput, testSigner } from './certificate-fixtures.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-signing-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function writeFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

describe('certificate signing keys', () => {
  it('a body signed with the key from the PEM file verifies with the exported public key PEM', () => {
    const { privateKeyPem, publicKeyPem } = testSigner();
    const signer = loadSigningKey(writeFile('key.pem', privateKeyPem));
    expect(signer.publicKeyPem).toBe(publicKeyPem);
    const message = Buffer.from('{"a":1}', 'utf8');
    const signature = signer.sign(message);
    expect(verifySignature(parsePublicKeyPem(signer.publicKeyPem), message, signature)).toBe(true);
  });

  it('the signature is plain Ed25519 over the canonical body, checkable with node:crypto alone', () => {
    const signer = testSigner();
    const certificate = chainCertificate(sampleInput('t-sign'), nextLink(null, new Date()), signer);
    const canonical = canonicalJson(certificateBody(certificate));
    const publicKey = createPublicKey(signer.publicKeyPem);
    expect(verify(null, Buffer.from(canonical, 'utf8'), publicKey, Buffer.from(certificate.signature, 'base64'))).toBe(
      true,
    );
    expect(certificate.hash).toBe(createHash('sha256').update(canonical, 'utf8').digest('hex'));
    expect(hashCertificate(certificate)).toBe(certificate.hash);
  });

  it('the keyId is the first 16 hex digits of SHA-256 over the SPKI DER of the public key', () => {
    const signer = testSigner();
    const der = createPublicKey(signer.publicKeyPem).export({ type: 'spki', format: 'der' });
    expect(signer.keyId).toBe(createHash('sha256').update(der).digest('hex').slice(0, 16));
    expect(keyIdOf(parsePublicKeyPem(signer.publicKeyPem))).toBe(signer.keyId);
  });

  it('a signature does not verify under another key, over another message, or re-encoded', () => {
    const signer = testSigner();
    const other = testSigner();
    const message = Buffer.from('certificate body', 'utf8');
    const signature = signer.sign(message);
    const key = parsePublicKeyPem(signer.publicKeyPem);
    expect(verifySignature(parsePublicKeyPem(other.publicKeyPem), message, signature)).toBe(false);
    expect(verifySignature(key, Buffer.from('certificate bodY', 'utf8'), signature)).toBe(false);
    // Node's base64 decoder ignores stray characters; the verifier must not.
    expect(verifySignature(key, message, `${signature} `)).toBe(false);
    expect(verifySignature(key, message, signature.replace(/==$/, ''))).toBe(false);
    expect(verifySignature(key, message, Buffer.from(signature, 'base64').toString('base64url'))).toBe(false);
    expect(verifySignature(key, message, 'not a signature')).toBe(false);
  });

  it('a missing, non-PEM or non-Ed25519 key file is a configuration error naming LETHE_SIGNING_KEY_FILE, quoting no key material', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const cases = [
      [path.join(dir, 'absent.pem'), /cannot read the signing key file .*absent\.pem \(ENOENT\)/],
      [writeFile('junk.pem', 'sEcReT-lOoKiNg'), /is not a PEM private key/],
      [writeFile('rsa.pem', rsa), /holds a rsa key, not Ed25519/],
    ] as const;
    for (const [file, message] of cases) {
      let error: unknown;
      try {
        loadSigningKey(file);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe('LETHE_SIGNING_KEY_FILE');
      expect((error as Error).message).toMatch(/^LETHE_SIGNING_KEY_FILE: /);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('sEcReT');
      expect((error as Error).message).not.toContain('BEGIN');
    }
  });

  it('the development key that loadConfig generates into the state directory loads as an Ed25519 signer', () => {
    const stateDir = path.join(dir, 'state');
    const config = loadConfig({ LETHE_ENV: 'development', LETHE_STATE_DIR: stateDir });
    expect(config.secrets.signingKeyFile?.startsWith(stateDir)).toBe(true);
    const signer = loadSigningKey(config.secrets.signingKeyFile);
    expect(signer.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(
      loadSigningKey(loadConfig({ LETHE_ENV: 'development', LETHE_STATE_DIR: stateDir }).secrets.signingKeyFile).keyId,
    ).toBe(signer.keyId);
  });

  it('a public key that is not Ed25519 is refused', () => {
    const rsaPublic = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    expect(() => parsePublicKeyPem(rsaPublic)).toThrow(/not Ed25519/);
    expect(() => parsePublicKeyPem('nope')).toThrow(/not a PEM public key/);
  });
});
