/**
 * The keys bearer tokens are verified and minted with. The API reads only public keys (a JWKS file or URL, each key
 * named by its `kid`); the private key stays with whoever mints (an identity provider, or an operator's
 * `lethe token mint --key`). Key material is never quoted in errors.
 */
import fs from 'node:fs';
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, type JSONWebKeySet, type JWK } from 'jose';
import { ConfigError } from '../../config/config.js';
import type { TokenKeys } from './tokens.js';

/** Where the token keys come from (the `tokens` section of the configuration). */
export interface TokenKeySources {
  jwksFile?: string;
  jwksUrl?: string;
  hs256Secret?: string;
}

const KID = /^[A-Za-z0-9._-]{1,64}$/;

/** Builds the verifier's key set; a JWKS file that cannot be read, or that holds a private key, stops the process. */
export function loadTokenKeys(sources: TokenKeySources): TokenKeys {
  const jwks = sources.jwksFile
    ? createLocalJWKSet(readJwksFile(sources.jwksFile))
    : sources.jwksUrl
      ? // Refetched at most every 30 s when a token names an unknown kid, so a new key is picked up without a restart.
        createRemoteJWKSet(new URL(sources.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 600_000 })
      : undefined;
  if (!jwks && !sources.hs256Secret) {
    throw new ConfigError(
      'LETHE_TOKEN_JWKS_FILE',
      'is required (or LETHE_TOKEN_JWKS_URL): the keys tokens are verified with',
    );
  }
  return { ...(jwks ? { jwks } : {}), ...(sources.hs256Secret ? { hs256Secret: sources.hs256Secret } : {}) };
}

function readJwksFile(file: string): JSONWebKeySet {
  const variable = 'LETHE_TOKEN_JWKS_FILE';
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'not JSON';
    throw new ConfigError(variable, `cannot read a JSON key set from ${file} (${code})`);
  }
  const keys = (parsed as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new ConfigError(variable, `${file} has no "keys"`);
  keys.forEach((k: JWK, i) => {
    if (k.kty !== 'OKP' || k.crv !== 'Ed25519' || typeof k.x !== 'string')
      throw new ConfigError(variable, `${file}: key ${i} is not an Ed25519 public key (kty OKP, crv Ed25519)`);
    if (typeof k.kid !== 'string' || !KID.test(k.kid))
      throw new ConfigError(variable, `${file}: key ${i} has no kid (1-64 letters, digits, ".", "_", "-")`);
    // The API verifies only: a private key in its key set is a secret it must not hold.
    if ('d' in k) throw new ConfigError(variable, `${file}: key ${k.kid} includes its private part ("d")`);
  });
  return parsed as JSONWebKeySet;
}

/** Reads the Ed25519 private key `lethe token mint --key` signs with; `option` names the flag in errors. */
export function loadTokenSigningKey(
  file: string,
  kid: string,
  option = '--key',
): { privateKey: KeyObject; kid: string } {
  if (!KID.test(kid)) throw new ConfigError('--kid', 'must be 1-64 letters, digits, ".", "_" or "-"');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: fs.readFileSync(file, 'utf8'), format: 'pem' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'not a PEM private key';
    throw new ConfigError(option, `cannot read an Ed25519 private key from ${file} (${code})`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new ConfigError(option, `${file} is not an Ed25519 key`);
  return { privateKey, kid };
}

/** The public JWK of a private key under `kid`: the entry to add to the API's key set. */
export function publicJwkOf(privateKey: KeyObject, kid: string): JWK {
  const { kty, crv, x } = createPublicKey(privateKey).export({ format: 'jwk' });
  return { kty, crv, x, kid, alg: 'EdDSA', use: 'sig' };
}
