/**
 * Tokens verified against public keys, and revoked by jti: the API holds only an Ed25519 key set (JWKS, keys by
 * `kid`), so a process that can verify cannot mint; and a revoked token is refused on every process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { LETHE_BIN, runProcess } from '../../support/cli-process.js';
import { buildApiServer } from '../../../app/api/server.js';
import { mintToken } from '../../../src/governance/auth/tokens.js';
import { loadTokenKeys, publicJwkOf } from '../../../src/governance/auth/token-keys.js';
import { REVOCATION_CACHE_MS } from '../../../src/governance/auth/revoked-token-store.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-token-keys-'));
const keyPair = () => generateKeyPairSync('ed25519').privateKey;
const current = { privateKey: keyPair(), kid: 'k-2026' };
const retired = { privateKey: keyPair(), kid: 'k-2025' };
const jwksFile = path.join(dir, 'jwks.json');
const currentPem = path.join(dir, 'current.pem');

describe('bearer tokens signed with Ed25519 keys named by kid, and revoked by jti', () => {
  let app: TestApp;
  /** The API as production runs it: the key set only, no HS256 secret. */
  let production: FastifyInstance;
  const tenant = uniqueTenant();

  const get = (api: FastifyInstance, token: string) =>
    api.inject({ method: 'GET', url: `/v1/tenants/${tenant}/audit`, headers: { authorization: `Bearer ${token}` } });
  const eddsa = (key: typeof current) => mintToken(key, { id: 'auditor-1', tenant, roles: ['auditor'] }, 600);

  beforeAll(async () => {
    fs.writeFileSync(jwksFile, JSON.stringify({ keys: [publicJwkOf(current.privateKey, current.kid)] }));
    fs.writeFileSync(currentPem, current.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    app = await startTestApp({ config: { LETHE_TOKEN_JWKS_FILE: jwksFile } });
    const { hs256Secret: _development, ...keySetOnly } = app.runtime.config.tokens;
    production = await buildApiServer({
      log: app.runtime.log,
      probes: [],
      services: app.services,
      tokenKeys: loadTokenKeys(keySetOnly),
    });
  });

  afterAll(async () => {
    await production?.close();
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('accepts a token signed by a key of the set, and refuses one signed by a key that is not, under a known or unknown kid', async () => {
    expect((await get(production, await eddsa(current))).statusCode).toBe(200);
    expect((await get(production, await eddsa(retired))).statusCode).toBe(401);
    expect((await get(production, await eddsa({ ...retired, kid: current.kid }))).statusCode).toBe(401);
    // No kid at all: the verifier does not try its keys one by one.
    const noKid = await new SignJWT({ tenant, roles: ['auditor'] })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setSubject('auditor-1')
      .setIssuer('lethe')
      .setAudience('lethe-api')
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(current.privateKey);
    expect((await get(production, noKid)).statusCode).toBe(401);
  });

  it('refuses an HS256 token where no HS256 secret is configured, even one signed with the development secret', async () => {
    const hs256 = await app.token(tenant, ['auditor']);
    expect((await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/audit`, token: hs256 })).statusCode).toBe(
      200,
    );
    expect((await get(production, hs256)).statusCode).toBe(401);
  });

  it('refuses a revoked token at once on the process that revoked it, and leaves tokens with another jti alone', async () => {
    const token = await eddsa(current);
    expect((await get(production, token)).statusCode).toBe(200);
    expect((await get(app.api, token)).statusCode).toBe(200);
    const { jti } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string };
    await app.services.revokedTokens.revoke(jti, new Date(Date.now() + 600_000));
    // Both servers share the services' store here, hence its cache: the revocation holds at once.
    expect((await get(production, token)).statusCode).toBe(401);
    expect((await get(app.api, token)).statusCode).toBe(401);
    // A token minted afterwards, with another jti, is not affected.
    expect((await get(production, await eddsa(current))).statusCode).toBe(200);
  });

  it('`lethe token mint --key --kid` signs a token the key set verifies; `lethe token revoke --jwt` revokes it from another process', async () => {
    const env = { ...process.env, LETHE_ENV: 'development' };
    const minted = await runProcess(
      process.execPath,
      [
        LETHE_BIN,
        '--json',
        'token',
        'mint',
        '--tenant',
        tenant,
        '--principal',
        'auditor-2',
        '--roles',
        'auditor',
      ].concat(['--key', currentPem, '--kid', current.kid]),
      { env },
    );
    expect(minted.code, minted.stderr).toBe(0);
    const { token, jti } = JSON.parse(minted.stdout) as { token: string; jti: string };
    expect(jti).toMatch(/^[0-9a-f-]{36}$/);
    expect((await get(production, token)).statusCode).toBe(200);
    const revoked = await runProcess(process.execPath, [LETHE_BIN, 'token', 'revoke', '--jwt', token], { env });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(jti);
    // This process cached "not revoked" a moment ago; the cache lets it through for at most that long.
    await new Promise((resolve) => setTimeout(resolve, REVOCATION_CACHE_MS + 100));
    expect((await get(production, token)).statusCode).toBe(401);
  });

  it('refuses a key set that holds a private key, or a key without a kid, naming LETHE_TOKEN_JWKS_FILE', () => {
    const withPrivate = path.join(dir, 'private.json');
    fs.writeFileSync(
      withPrivate,
      JSON.stringify({ keys: [{ ...current.privateKey.export({ format: 'jwk' }), kid: current.kid }] }),
    );
    expect(() => loadTokenKeys({ jwksFile: withPrivate })).toThrow(/^LETHE_TOKEN_JWKS_FILE: .*private part/);
    const noKid = path.join(dir, 'no-kid.json');
    const { kid: _kid, ...jwk } = publicJwkOf(current.privateKey, current.kid);
    fs.writeFileSync(noKid, JSON.stringify({ keys: [jwk] }));
    expect(() => loadTokenKeys({ jwksFile: noKid })).toThrow(/^LETHE_TOKEN_JWKS_FILE: .*no kid/);
    expect(() => loadTokenKeys({ jwksFile: path.join(dir, 'missing.json') })).toThrow(/^LETHE_TOKEN_JWKS_FILE: /);
  });
});
