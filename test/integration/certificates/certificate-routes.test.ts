import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { registerErrorHandling } from '../../../app/api/errors.js';
import { registerAuthentication } from '../../../app/api/authenticate.js';
import { registerCertificateRoutes } from '../../../app/api/routes/certificate.routes.js';
import { registerCertificateCommands } from '../../../app/cli/commands/certificates.command.js';
import { registerVerifyCommand } from '../../../app/cli/commands/verify.command.js';
import { createCliContext } from '../../../app/cli/context.js';
import { exportAuditJsonl } from '../../../src/governance/audit/audit-export.js';
import { createMongoAuditLog, type MongoAuditLog } from '../../../src/governance/audit/mongo-audit-log.js';
import { mintToken } from '../../../src/governance/auth/tokens.js';
import type { Role } from '../../../src/governance/auth/principal.js';
import {
  createMongoCertificateStore,
  type CertificateStore,
} from '../../../src/governance/certificates/certificate-store.js';
import { verifyCertificatesJsonl } from '../../../src/governance/certificates/certificate-verify.js';
import type { DeletionCertificate } from '../../../src/governance/certificates/certificate.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { sampleInput, testSigner } from '../../unit/certificates/certificate-fixtures.js';

let runtime: Runtime;
let app: FastifyInstance;
let audit: MongoAuditLog;
let store: CertificateStore;
let baseUrl: string;
const signer = testSigner();
const tenant = uniqueId('t');
const issued: DeletionCertificate[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-cert-routes-'));

const token = (roles: Role[], forTenant = tenant) =>
  mintToken(runtime.config.tokens.hs256Secret!, { id: uniqueId('p'), tenant: forTenant, roles }, 600);

beforeAll(async () => {
  runtime = testRuntime();
  audit = createMongoAuditLog(runtime.db);
  await audit.ensureIndexes();
  let day = 0;
  store = createMongoCertificateStore(runtime.db, {
    signer,
    audit,
    clock: () => new Date(Date.UTC(2025, 0, 10 + day, 9)),
  });
  await store.ensureIndexes();
  for (day = 0; day < 3; day++) issued.push(await store.issue(sampleInput(tenant, day)));

  // The API as the server wires it: error handling, authentication and the role gate, then the routes.
  app = Fastify();
  registerErrorHandling(app);
  registerAuthentication(app, { tokenKeys: { hs256Secret: runtime.config.tokens.hs256Secret! }, audit });
  registerCertificateRoutes(app, { certificates: store, publicKeyPem: signer.publicKeyPem });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function get(url: string, roles: Role[] = ['auditor']) {
  return app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${await token(roles)}` } });
}

async function auditJsonl(): Promise<string> {
  let text = '';
  for await (const line of exportAuditJsonl(audit, tenant)) text += line;
  return text;
}

describe('certificate routes', () => {
  it('an auditor exports the certificates as JSONL and the public key as PEM, and they verify offline', async () => {
    const exported = await get(`/v1/tenants/${tenant}/certificates`);
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toContain('application/x-ndjson');
    const key = await get(`/v1/tenants/${tenant}/certificates/public-key`);
    expect(key.statusCode).toBe(200);
    expect(key.body).toBe(signer.publicKeyPem);
    // The audit export is taken after the routes were called: refusals and exports add entries, not anchors.
    expect(
      verifyCertificatesJsonl({ certificates: exported.body, audit: await auditJsonl() }, { publicKeys: key.body }),
    ).toMatchObject({
      ok: true,
      count: 3,
      anchored: 3,
    });
  });

  it('a period in the query selects the certificates issued in it; a bad date is a 400 naming the field', async () => {
    const slice = await get(`/v1/tenants/${tenant}/certificates?from=2025-01-11&to=2025-01-11`);
    expect(
      slice.body
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as DeletionCertificate).seq),
    ).toEqual([2]);
    const bad = await get(`/v1/tenants/${tenant}/certificates?from=last-week`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: 'ValidationError', field: 'from' } });
  });

  it('a DPO reads one certificate by id; an unknown id is 404', async () => {
    const one = await get(`/v1/tenants/${tenant}/certificates/${issued[1]!.certificateId}`, ['dpo']);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(issued[1]);
    expect((await get(`/v1/tenants/${tenant}/certificates/crt_nope`, ['dpo'])).statusCode).toBe(404);
  });

  it('an agent may not export certificates, and another tenant cannot read them', async () => {
    expect((await get(`/v1/tenants/${tenant}/certificates`, ['agent'])).statusCode).toBe(403);
    const foreign = await app.inject({
      method: 'GET',
      url: `/v1/tenants/${tenant}/certificates`,
      headers: { authorization: `Bearer ${await token(['auditor'], uniqueId('t'))}` },
    });
    expect(foreign.statusCode).toBe(403);
  });
});

describe('the auditor at the command line', () => {
  /** Runs `lethe <args>` in-process against the listening API; returns stdout and the exit code. */
  async function lethe(args: string[], roles: Role[] = ['auditor']): Promise<{ out: string; exitCode: number }> {
    const bearer = await token(roles);
    let out = '';
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    process.exitCode = undefined;
    try {
      const program = new Command('lethe').option('--json').option('--tenant <tenant>').exitOverride();
      registerCertificateCommands(program, () => createCliContext({ api: baseUrl, token: bearer }));
      registerVerifyCommand(program);
      await program.parseAsync(args, { from: 'user' });
      return { out, exitCode: Number(process.exitCode ?? 0) };
    } finally {
      write.mockRestore();
      process.exitCode = undefined;
    }
  }

  it('exports a period through the API and verifies it offline; a tampered copy exits 7 naming the certificate', async () => {
    const certs = path.join(dir, 'certs.jsonl');
    const auditFile = path.join(dir, 'audit.jsonl');
    const keyFile = path.join(dir, 'key.pem');
    fs.writeFileSync(
      certs,
      (await lethe(['certificates', 'export', '--from', '2025-01-01', '--to', '2025-01-31'])).out,
    );
    fs.writeFileSync(auditFile, await auditJsonl());
    fs.writeFileSync(keyFile, signer.publicKeyPem);

    const ok = await lethe([
      'verify',
      certs,
      '--public-key',
      keyFile,
      '--audit',
      auditFile,
      '--from',
      '2025-01-01',
      '--to',
      '2025-01-31',
    ]);
    expect(ok.exitCode).toBe(0);
    expect(ok.out).toMatch(/^ok: 3 certificates \(seq 1–3\)/);

    const tampered = path.join(dir, 'tampered.jsonl');
    fs.writeFileSync(
      tampered,
      fs
        .readFileSync(certs, 'utf8')
        .split('\n')
        .filter((_, i) => i !== 2)
        .join('\n'),
    );
    const failed = await lethe([
      'verify',
      tampered,
      '--public-key',
      keyFile,
      '--audit',
      auditFile,
      '--to',
      '2025-01-31',
    ]);
    expect(failed.exitCode).toBe(7);
    expect(failed.out).toBe(
      `FAILED at line 3 (certificate ${issued[2]!.certificateId}, seq 3): missing certificate: seq 3 is anchored at audit seq ${
        (await store.anchorOf(tenant, issued[2]!.certificateId))!.auditSeq
      } as issued within the period but is not in the export\n`,
    );
  });
});
