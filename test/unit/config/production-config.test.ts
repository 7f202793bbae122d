import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { configRefusal } from '../../support/config-refusal.js';
import { loadTokenKeys } from '../../../src/governance/auth/token-keys.js';
import { loadPublicSigningKey, loadSigningKey } from '../../../src/governance/certificates/signing.js';

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-production-config-'));
afterAll(() => fs.rmSync(stateDir, { recursive: true, force: true }));

/** What a production deployment sets (the API's part): a fingerprint secret, a token key set, the public key. */
const production = {
  LETHE_ENV: 'production',
  LETHE_STATE_DIR: stateDir,
  LETHE_FINGERPRINT_SECRET: 'f'.repeat(32),
  LETHE_KEK_FILE: '/keys/kek.json',
  LETHE_TOKEN_JWKS_URL: 'https://id.example/.well-known/jwks.json',
  LETHE_SIGNING_PUBLIC_KEY_FILE: '/keys/signing.pub.pem',
  LETHE_EMBEDDER: 'hashing',
};

const variableOf = (load: () => unknown) => configRefusal(load).variable;

describe('production mode refuses to guess', () => {
  it('without LETHE_ENV, stops naming it, and generates no secret', () => {
    expect(variableOf(() => loadConfig({ LETHE_STATE_DIR: stateDir }))).toBe('LETHE_ENV');
    expect(() => loadConfig({ LETHE_STATE_DIR: stateDir })).toThrow(/^LETHE_ENV: is required: development, test/);
    expect(fs.readdirSync(stateDir)).toEqual([]);
  });

  it('in production, a missing fingerprint secret stops the process naming LETHE_FINGERPRINT_SECRET', () => {
    const { LETHE_FINGERPRINT_SECRET: _secret, ...rest } = production;
    expect(variableOf(() => loadConfig(rest))).toBe('LETHE_FINGERPRINT_SECRET');
    expect(fs.readdirSync(stateDir)).toEqual([]);
  });

  it('in production, a missing KEK keyring stops the process naming LETHE_KEK_FILE, and none is generated', () => {
    const { LETHE_KEK_FILE: _kek, ...rest } = production;
    expect(variableOf(() => loadConfig(rest))).toBe('LETHE_KEK_FILE');
    expect(fs.readdirSync(stateDir)).toEqual([]);
  });

  it('with the KEKs in AWS KMS, needs the region and no keyring file, and refuses an alias prefix AWS reserves', () => {
    const { LETHE_KEK_FILE: _kek, ...rest } = production;
    const inKms = { ...rest, LETHE_KMS: 'aws-kms' };
    expect(variableOf(() => loadConfig(inKms))).toBe('LETHE_AWS_KMS_REGION');
    expect(loadConfig({ ...inKms, LETHE_AWS_KMS_REGION: 'eu-west-1' }).sealing.kek).toEqual({
      kind: 'aws-kms',
      region: 'eu-west-1',
      aliasPrefix: 'alias/lethe',
      deletionWindowDays: 7,
      timeouts: { connectMs: 2_000, requestMs: 5_000 },
    });
    // One call's wait is bounded, and the connection's wait never exceeds it.
    expect(
      loadConfig({ ...inKms, LETHE_AWS_KMS_REGION: 'eu-west-1', LETHE_AWS_KMS_TIMEOUT_MS: '800' }).sealing.kek,
    ).toMatchObject({ timeouts: { connectMs: 800, requestMs: 800 } });
    expect(
      variableOf(() => loadConfig({ ...inKms, LETHE_AWS_KMS_REGION: 'eu-west-1', LETHE_AWS_KMS_TIMEOUT_MS: '0' })),
    ).toBe('LETHE_AWS_KMS_TIMEOUT_MS');
    const withRegion = { ...inKms, LETHE_AWS_KMS_REGION: 'eu-west-1' };
    expect(variableOf(() => loadConfig({ ...withRegion, LETHE_AWS_KMS_ALIAS_PREFIX: 'alias/aws/lethe' }))).toBe(
      'LETHE_AWS_KMS_ALIAS_PREFIX',
    );
    expect(variableOf(() => loadConfig({ ...withRegion, LETHE_AWS_KMS_ALIAS_PREFIX: 'lethe' }))).toBe(
      'LETHE_AWS_KMS_ALIAS_PREFIX',
    );
    expect(variableOf(() => loadConfig({ ...withRegion, LETHE_AWS_KMS_DELETION_WINDOW_DAYS: '3' }))).toBe(
      'LETHE_AWS_KMS_DELETION_WINDOW_DAYS',
    );
    expect(variableOf(() => loadConfig({ ...withRegion, LETHE_KMS: 'vault' }))).toBe('LETHE_KMS');
    expect(fs.readdirSync(stateDir)).toEqual([]);
  });

  it('in production, an HS256 token secret stops the process; without a key set the API stops naming LETHE_TOKEN_JWKS_FILE', () => {
    expect(variableOf(() => loadConfig({ ...production, LETHE_TOKEN_SECRET: 's'.repeat(32) }))).toBe(
      'LETHE_TOKEN_SECRET',
    );
    const { LETHE_TOKEN_JWKS_URL: _url, ...noKeys } = production;
    const config = loadConfig(noKeys);
    expect(config.tokens.hs256Secret).toBeUndefined();
    expect(variableOf(() => loadTokenKeys(config.tokens))).toBe('LETHE_TOKEN_JWKS_FILE');
  });

  it('the API needs only the public certificate key, the worker the private one: each names its own variable', () => {
    const config = loadConfig(production);
    expect(config.secrets.signingKeyFile).toBeUndefined();
    expect(variableOf(() => loadSigningKey(config.secrets.signingKeyFile))).toBe('LETHE_SIGNING_KEY_FILE');
    expect(variableOf(() => loadPublicSigningKey(undefined))).toBe('LETHE_SIGNING_PUBLIC_KEY_FILE');
    expect(variableOf(() => loadPublicSigningKey(config.secrets.signingPublicKeyFile))).toBe(
      'LETHE_SIGNING_PUBLIC_KEY_FILE',
    );
  });

  it('in development, the generated key pair is defaulted together, and a public key loads as a signer that cannot sign', () => {
    const dev = loadConfig({ LETHE_ENV: 'development', LETHE_STATE_DIR: stateDir, LETHE_EMBEDDER: 'hashing' });
    const signer = loadSigningKey(dev.secrets.signingKeyFile);
    const served = loadPublicSigningKey(dev.secrets.signingPublicKeyFile);
    expect(served.keyId).toBe(signer.keyId);
    expect(served.publicKeyPem).toBe(signer.publicKeyPem);
    expect(() => served.sign(new Uint8Array([1]))).toThrow(/only the public certificate key/);
    // An operator's own private key is not paired with the generated public key.
    const own = loadConfig({
      LETHE_ENV: 'development',
      LETHE_STATE_DIR: stateDir,
      LETHE_EMBEDDER: 'hashing',
      LETHE_SIGNING_KEY_FILE: '/keys/own.pem',
    });
    expect(own.secrets.signingPublicKeyFile).toBeUndefined();
  });
});

describe('fingerprint keys', () => {
  const dev = { LETHE_ENV: 'development', LETHE_STATE_DIR: stateDir, LETHE_EMBEDDER: 'hashing' };

  it('LETHE_FINGERPRINT_KEYS lists keys with ids, the first current; the generated secret does not join them', () => {
    const keys = loadConfig({ ...dev, LETHE_FINGERPRINT_KEYS: `b:${'b'.repeat(32)}, a:${'a'.repeat(32)}` }).secrets
      .fingerprintKeys;
    expect(keys).toEqual([
      { id: 'b', secret: 'b'.repeat(32) },
      { id: 'a', secret: 'a'.repeat(32) },
    ]);
    expect(loadConfig(dev).secrets.fingerprintKeys.map((k) => k.id)).toEqual(['k0']);
  });

  it('a malformed list is refused naming LETHE_FINGERPRINT_KEYS and the key id, never the secret', () => {
    for (const value of [
      `${'s'.repeat(32)}`,
      `a:short`,
      `a:${'s'.repeat(32)},a:${'t'.repeat(32)}`,
      `a b:${'s'.repeat(32)}`,
    ]) {
      let message = '';
      try {
        loadConfig({ ...dev, LETHE_FINGERPRINT_KEYS: value });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).variable).toBe('LETHE_FINGERPRINT_KEYS');
        message = (error as Error).message;
      }
      expect(message, value).not.toBe('');
      expect(message).not.toMatch(/s{32}|t{32}|short/);
    }
    expect(variableOf(() => loadConfig({ ...production, LETHE_FINGERPRINT_KEYS: `a:${'a'.repeat(32)}` }))).toBe(
      'LETHE_FINGERPRINT_KEYS',
    );
  });
});
