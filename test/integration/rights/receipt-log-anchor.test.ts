/**
 * An access request's receipt carries its place in the audit log, and the package is anchored through it: with the
 * certificate key and the log key alone, `lethe verify` accepts the anchored receipt and the package beside it, and
 * refuses a changed package or receipt (exit 7) naming which. A build retried after a crash before its receipt was
 * stored issues the receipt, anchored, with one audit entry.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../app/cli/exit-codes.js';
import type { AnchoredReceipt } from '../../../src/governance/rights/anchored-receipt.js';
import { receivedAccessRequest, type AccessPackage } from '../../../src/governance/rights/access-request.js';
import { verifyAnchoredReceipt } from '../../../src/governance/rights/anchored-receipt.js';
import { parsePublicKeyPem } from '../../../src/governance/certificates/signing.js';
import { accessActivitiesOver } from '../../support/access-activities.js';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { cliEnvironment, listenOnRealPort, runLethe, type ProcessRun } from '../../support/cli-process.js';
import { buildSubjectGraph, type SubjectGraph } from '../../support/erasure-fixture.js';

let app: TestApp;
let env: NodeJS.ProcessEnv;
const tenant = uniqueTenant();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-receipt-anchor-'));
let requestId: string;
let logKey: string;
let keyFile: string;
let receiptFile: string;
let packageFile: string;
let graph: SubjectGraph;

const describeRun = (run: ProcessRun) => `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
const lethe = async (args: string[]) =>
  runLethe(args, { env: { ...env, LETHE_TOKEN: await app.token(tenant, ['auditor'], 'aud-1') } });
const verify = (file: string, ...more: string[]) =>
  lethe(['verify', file, '--public-key', keyFile, '--log-key', logKey, ...more]);

beforeAll(async () => {
  app = await startTestApp();
  env = cliEnvironment(app, await listenOnRealPort(app));
  graph = await buildSubjectGraph(app, tenant, `zacc${randomUUID().replaceAll('-', '')}`);
  const dpo = await app.token(tenant, ['dpo'], 'dora');
  const filed = await app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/subject-rights/access`,
    token: dpo,
    payload: { selector: { subjectId: graph.subject }, requestKey: `acc-${randomUUID()}` },
  });
  expect(filed.statusCode, filed.body).toBe(202);
  requestId = filed.json<{ id: string }>().id;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const view = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/subject-rights/access/${requestId}`,
      token: dpo,
    });
    if (view.json<{ state: string }>().state === 'ready') break;
    if (Date.now() > deadline) throw new Error(`access ${requestId} is not ready: ${view.body}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const downloaded = await app.request({
    method: 'GET',
    url: `/v1/tenants/${tenant}/subject-rights/access/${requestId}/package`,
    token: dpo,
  });
  expect(downloaded.statusCode, downloaded.body).toBe(200);
  packageFile = path.join(dir, 'package.json');
  fs.writeFileSync(packageFile, downloaded.body);
  keyFile = path.join(dir, 'key.pem');
  fs.writeFileSync(keyFile, app.services.publicKeyPem);
  logKey = app.services.checkpoints.verifierKeyOf(tenant);
  receiptFile = path.join(dir, 'receipt.json');
  const written = await lethe(['rights', 'receipt', requestId, '--anchored', '--out', receiptFile]);
  expect(written.code, describeRun(written)).toBe(0);
}, 240_000);
afterAll(async () => {
  await app?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("an access request's receipt and package against the log, without the chain", () => {
  it('verifies the anchored receipt, and the package through it', async () => {
    const anchored = JSON.parse(fs.readFileSync(receiptFile, 'utf8')) as AnchoredReceipt;
    expect(anchored.logAnchor.entry).toMatchObject({ action: 'subject-access.package-built', target: requestId });
    const receipt = await verify(receiptFile);
    expect(receipt.code, describeRun(receipt)).toBe(ExitCode.ok);
    expect(receipt.stdout).toContain(`access receipt ${requestId}`);
    const pkg = await verify(packageFile, '--receipt', receiptFile);
    expect(pkg.code, describeRun(pkg)).toBe(ExitCode.ok);
    expect(pkg.stdout).toContain('access package and its access receipt');
    const missing = await verify(packageFile);
    expect(missing.code, describeRun(missing)).toBe(ExitCode.usage);
  });

  it('refuses a changed package, a changed receipt and a changed entry (exit 7), naming which', async () => {
    const pkg = JSON.parse(fs.readFileSync(packageFile, 'utf8')) as AccessPackage;
    const fewer = path.join(dir, 'fewer.json');
    fs.writeFileSync(fewer, JSON.stringify({ ...pkg, records: pkg.records.slice(1) }));
    const dropped = await verify(fewer, '--receipt', receiptFile);
    expect(dropped.code, describeRun(dropped)).toBe(ExitCode.verificationFailed);
    expect(dropped.stdout).toContain('FAILED (package)');

    const anchored = JSON.parse(fs.readFileSync(receiptFile, 'utf8')) as AnchoredReceipt;
    const changed = (name: string, value: AnchoredReceipt) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, JSON.stringify(value));
      return file;
    };
    const receipt = await verify(
      changed('receipt.json', { ...anchored, receipt: { ...anchored.receipt, state: 'expired' } }),
    );
    expect(receipt.stdout, describeRun(receipt)).toContain('FAILED (receipt)');
    const entry = await verify(
      changed('entry.json', {
        ...anchored,
        logAnchor: { ...anchored.logAnchor, entry: { ...anchored.logAnchor.entry, actor: 'systen' } },
      }),
    );
    expect(entry.code, describeRun(entry)).toBe(ExitCode.verificationFailed);
    expect(entry.stdout).toContain('FAILED (entry)');
  });

  it('a build retried after a crash before its receipt was stored issues it, anchored, with one audit entry', async () => {
    const id = `acc_retry_${randomUUID().replaceAll('-', '')}`;
    const s = app.services;
    await s.access.create(
      receivedAccessRequest(
        { _id: id, tenant, selectorKind: 'subject', selectorHash: 'h', requester: 'dora' },
        new Date(),
      ),
      { subjectId: graph.subject },
    );
    let crashes = 1;
    const activities = accessActivitiesOver(s, {
      receipts: {
        ...s.receipts,
        put: async (receipt) => {
          if (crashes-- > 0) throw new Error('simulated crash before the receipt');
          return s.receipts.put(receipt);
        },
      },
    });
    const ref = { tenant, requestId: id, deliveryWindowMs: 60_000 };
    await expect(activities.buildAccessPackage(ref)).rejects.toThrow('simulated crash');
    await activities.buildAccessPackage(ref);
    await activities.buildAccessPackage(ref);

    const built: AuditEntry[] = [];
    for await (const e of s.audit.entries(tenant))
      if (e.action === 'subject-access.package-built' && e.target === id) built.push(e);
    expect(built).toHaveLength(1);
    const anchored = await s.receipts.anchored(tenant, id);
    expect(anchored?.receipt.anchor).toMatchObject({ auditSeq: built[0]!.seq, auditHash: built[0]!.hash });
    const verdict = await verifyAnchoredReceipt(anchored, {
      publicKeys: [parsePublicKeyPem(s.publicKeyPem)],
      logKey: logKey,
    });
    expect(verdict).toMatchObject({ ok: true, auditSeq: built[0]!.seq });
  });
});
