/**
 * The API and the worker as a production deployment starts them (`LETHE_ENV=production`, nothing generated): the
 * API runs on public keys only, and a process missing what it needs stops at once, naming the variable.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_DIR, runProcess } from '../../support/cli-process.js';
import { freePort } from '../../../stack/processes.js';
import { mintToken } from '../../../src/governance/auth/tokens.js';
import { publicJwkOf } from '../../../src/governance/auth/token-keys.js';
import { uniqueTenant } from '../../support/app.js';
import { ensureLocalKekFile } from '../../../src/substrate/crypto/local-kek-file.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-production-boot-'));
const tokenKey = { privateKey: generateKeyPairSync('ed25519').privateKey, kid: 'boot-1' };
const certificateKey = generateKeyPairSync('ed25519');
const file = (name: string, text: string) => {
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};
const jwksFile = file('jwks.json', JSON.stringify({ keys: [publicJwkOf(tokenKey.privateKey, tokenKey.kid)] }));
const publicKeyFile = file('cert.pub.pem', certificateKey.publicKey.export({ type: 'spki', format: 'pem' }).toString());
const kekFile = path.join(dir, 'kek.json');
ensureLocalKekFile(kekFile);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The environment without anything of the developer's or the suite's Lethe settings: only what is given. */
function productionEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('LETHE_')));
  return {
    ...inherited,
    LETHE_ENV: 'production',
    LETHE_STATE_DIR: dir,
    LETHE_EMBEDDER: 'hashing',
    LOG_LEVEL: 'warn',
    LETHE_KEK_FILE: kekFile,
    ...extra,
  };
}

const entry = (name: 'api' | 'worker') =>
  path.join(REPO_DIR, 'app', ...(name === 'api' ? ['api', 'server.main.ts'] : ['worker', 'worker.main.ts']));
const run = (name: 'api' | 'worker', env: NodeJS.ProcessEnv) =>
  runProcess(process.execPath, ['--import', 'tsx', entry(name)], { env, timeoutMs: 60_000 });

describe('production mode refuses to guess', () => {
  it('an API or a worker without LETHE_ENV stops, naming it, and generates no secret', async () => {
    for (const name of ['api', 'worker'] as const) {
      const env = productionEnv({});
      delete env.LETHE_ENV;
      const result = await run(name, env);
      expect(result.code, name).toBe(1);
      expect(result.stderr, name).toMatch(/^configuration error: LETHE_ENV: is required/);
    }
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('dev-'))).toEqual([]);
  });

  it('in production, a missing secret or key stops the process naming the variable', async () => {
    const secret = { LETHE_FINGERPRINT_SECRET: 'f'.repeat(32) };
    const cases: [string, 'api' | 'worker', Record<string, string>][] = [
      [
        'LETHE_FINGERPRINT_SECRET',
        'api',
        { LETHE_TOKEN_JWKS_FILE: jwksFile, LETHE_SIGNING_PUBLIC_KEY_FILE: publicKeyFile },
      ],
      ['LETHE_TOKEN_JWKS_FILE', 'api', { ...secret, LETHE_SIGNING_PUBLIC_KEY_FILE: publicKeyFile }],
      ['LETHE_SIGNING_PUBLIC_KEY_FILE', 'api', { ...secret, LETHE_TOKEN_JWKS_FILE: jwksFile }],
      ['LETHE_TOKEN_SECRET', 'api', { ...secret, LETHE_TOKEN_SECRET: 's'.repeat(32), LETHE_TOKEN_JWKS_FILE: jwksFile }],
      ['LETHE_SIGNING_KEY_FILE', 'worker', secret],
      ['LETHE_KEK_FILE', 'worker', { ...secret, LETHE_KEK_FILE: path.join(dir, 'no-such-keyring.json') }],
      ['LETHE_TEMPORAL_TLS_CA', 'worker', { ...secret, LETHE_TEMPORAL_TLS_CA: path.join(dir, 'no-such-ca.pem') }],
    ];
    for (const [variable, name, env] of cases) {
      const result = await run(name, productionEnv(env));
      expect(result.code, variable).toBe(1);
      expect(result.stderr, variable).toMatch(new RegExp(`^configuration error: ${variable}: `));
      expect(result.stderr, variable).not.toContain('f'.repeat(32));
    }
  });

  it('the API runs on the public keys alone: it verifies an EdDSA token and serves the certificate public key', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', entry('api')], {
      cwd: REPO_DIR,
      env: productionEnv({
        LETHE_FINGERPRINT_SECRET: 'f'.repeat(32),
        LETHE_TOKEN_JWKS_FILE: jwksFile,
        LETHE_SIGNING_PUBLIC_KEY_FILE: publicKeyFile,
        LETHE_API_PORT: String(port),
      }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    try {
      const base = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 45_000;
      for (;;) {
        const up = await fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) break;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the API did not start: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const tenant = uniqueTenant();
      const token = await mintToken(tokenKey, { id: 'auditor-1', tenant, roles: ['auditor'] }, 600);
      const response = await fetch(`${base}/v1/tenants/${tenant}/certificates/public-key`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status, stderr).toBe(200);
      expect(await response.text()).toContain(
        certificateKey.publicKey.export({ type: 'spki', format: 'pem' }).toString().trim().split('\n')[1],
      );
    } finally {
      child.kill('SIGTERM');
    }
  });
});
