import { loadTokenKeys } from '../../../src/governance/auth/token-keys.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApiServer } from '../../../app/api/server.js';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';
import type { CertificateStore } from '../../../src/governance/certificates/certificate-store.js';
import type { DeletionCertificate } from '../../../src/governance/certificates/certificate.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';

/** A gate the store waits at after its first item: opened by the test once the client has read that item. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** GETs `url` over a real socket and resolves with the first line of the body, leaving the response streaming. */
function firstLine(port: number, url: string, token: string) {
  return new Promise<{ line: string; rest: Promise<string> }>((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: url, headers: { authorization: `Bearer ${token}` } });
    request.on('error', reject);
    request.on('response', (response) => {
      let body = '';
      let told = false;
      let finish!: (rest: string) => void;
      const rest = new Promise<string>((done) => (finish = done));
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
        if (!told && body.includes('\n')) {
          told = true;
          resolve({ line: body.slice(0, body.indexOf('\n')), rest });
        }
      });
      response.on('end', () => finish(body));
    });
  });
}

/**
 * The exports of a tenant's whole chain are sent as they are read: the first line reaches the client while the
 * store has not yet read the second. An export buffered whole would answer only after the gate, which the test
 * opens only after the first line arrived: it would wait until the test's timeout.
 */
describe('the certificate and audit exports stream', () => {
  let app: TestApp;
  let api: FastifyInstance;
  let port: number;
  const tenant = uniqueTenant();
  const certificates = gate();
  const entries = gate();
  beforeAll(async () => {
    app = await startTestApp();
    const gatedCertificates: CertificateStore = {
      ...app.services.certificates,
      async *list() {
        yield { certificateId: 'cert-1' } as unknown as DeletionCertificate;
        await certificates.opened;
        yield { certificateId: 'cert-2' } as unknown as DeletionCertificate;
      },
    };
    const gatedAudit: typeof app.services.audit = {
      ...app.services.audit,
      async *entries() {
        yield { tenant, seq: 1 } as AuditEntry;
        await entries.opened;
        yield { tenant, seq: 2 } as AuditEntry;
      },
    };
    api = await buildApiServer({
      log: app.runtime.log,
      probes: [],
      services: { ...app.services, certificates: gatedCertificates, audit: gatedAudit },
      tokenKeys: loadTokenKeys(app.runtime.config.tokens),
    });
    await api.listen({ host: '127.0.0.1', port: 0 });
    port = (api.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    certificates.open();
    entries.open();
    await api?.close();
    await app?.close();
  });

  it('sends the first certificate before the store reads the next', async () => {
    const auditor = await app.token(tenant, ['auditor']);
    const { line, rest } = await firstLine(port, `/v1/tenants/${tenant}/certificates`, auditor);
    expect(JSON.parse(line)).toEqual({ certificateId: 'cert-1' });
    certificates.open();
    expect((await rest).trim().split('\n')).toHaveLength(2);
  }, 20_000);

  it('sends the first audit entry before the log reads the next', async () => {
    const auditor = await app.token(tenant, ['auditor']);
    const { line, rest } = await firstLine(port, `/v1/tenants/${tenant}/audit`, auditor);
    expect(JSON.parse(line)).toMatchObject({ seq: 1 });
    entries.open();
    expect((await rest).trim().split('\n')).toHaveLength(2);
  }, 20_000);
});
