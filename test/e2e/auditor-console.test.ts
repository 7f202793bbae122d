/// <reference lib="dom" />
/**
 * The auditor console in a real browser: the certificates and the audit chain exported through the API and verified
 * in the page by the bundled verifier of `lethe verify` (WebCrypto Ed25519). An honest export passes; a tampered one
 * fails at the line, and for the reason, that `lethe verify` names for the same files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueTenant } from '../support/app.js';
import { buildSubjectGraph, completeErasure, fileErasure } from '../support/erasure-fixture.js';
import { cliEnvironment, runLethe } from '../support/cli-process.js';
import {
  expectNoPageErrors,
  screenshotForDocs,
  seriousAccessibilityViolations,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-page.js';

describe('auditor console', () => {
  let f: ConsoleFixture;
  let tenant: string;
  let dir: string;
  let auditor: string;

  beforeAll(async () => {
    f = await startConsoleFixture();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-auditor-console-'));
    tenant = uniqueTenant();
    const graph = await buildSubjectGraph(f.app, tenant, 'CANARY-AUDITOR-CONSOLE');
    // Two erasures: two certificates, chained and anchored.
    for (const selector of [{ subjectId: graph.subject }, { memoryIds: [graph.control[1]!] }]) {
      const id = await fileErasure(f.app, tenant, selector);
      // Ben's memory repeats the event it was extracted from: the DPO certifies with that copy stated.
      expect((await completeErasure(f.app, tenant, id, 'certify')).state).toBe('completed');
    }
    auditor = await f.app.token(tenant, ['auditor'], 'aud-1');
  }, 240_000);
  afterAll(async () => {
    await f?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const exported = async (url: string) => {
    const response = await f.app.request({ method: 'GET', url: `/v1/tenants/${tenant}/${url}`, token: auditor });
    expect(response.statusCode).toBe(200);
    return response.body;
  };

  it('verifies an honest export in the browser: green, with the count, the key and the anchors', async () => {
    const { page, signIn, errors } = await f.page();
    await signIn(auditor, 'audit');
    await page.getByRole('button', { name: 'Export and verify in this browser' }).click();
    const verdict = page.locator('[data-verdict]');
    await expect.poll(() => verdict.getAttribute('data-verdict'), { timeout: 30_000 }).toBe('ok');
    const text = await verdict.textContent();
    expect(text).toContain('Verified: 2 certificates (seq 1–2)');
    expect(text).toMatch(/all 2 anchored in an intact audit chain of \d+ entries/);
    // The figures: both erasures completed this week, none overdue, with times to close.
    const figures = page.locator('[data-testid=erasure-figures]');
    await expect.poll(() => figures.textContent()).toContain('Overdue now0');
    expect(await figures.textContent()).toMatch(/Median time to close\d+\.\d (min|h|days)95th/);
    expect(await page.locator('table.per-week tbody tr').last().textContent()).toMatch(/2$/);
    await screenshotForDocs(page, 'auditor-verified');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expectNoPageErrors(errors);
  }, 120_000);

  it('names the bad line of a tampered export, as lethe verify does for the same files', async () => {
    const certificates = await exported('certificates');
    const audit = await exported('audit');
    const lines = certificates.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    // The requester changed after sealing, on the second line.
    const second = JSON.parse(lines[1]!) as { requester: string };
    second.requester = 'someone-else';
    const tampered = `${[lines[0], JSON.stringify(second)].join('\n')}\n`;

    const { page, signIn } = await f.page();
    await signIn(auditor, 'audit');
    await page.getByLabel('Certificates (JSONL)').setInputFiles({
      name: 'certificates.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(tampered),
    });
    await page.getByLabel('Audit chain (JSONL)').setInputFiles({
      name: 'audit.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(audit),
    });
    await page.getByRole('button', { name: 'Verify files' }).click();
    const verdict = page.locator('[data-verdict]');
    await expect.poll(() => verdict.getAttribute('data-verdict'), { timeout: 30_000 }).toBe('failed');
    const shown = (await verdict.textContent()) ?? '';
    expect(shown).toContain('FAILED in the certificate export at line 2');
    const reason = (await page.locator('[data-testid=verdict-reason]').textContent()) ?? '';
    expect(reason).toMatch(/^hash mismatch:/);
    await screenshotForDocs(page, 'auditor-tampered');

    const certFile = path.join(dir, 'tampered.jsonl');
    const auditFile = path.join(dir, 'audit.jsonl');
    const keyFile = path.join(dir, 'key.pem');
    fs.writeFileSync(certFile, tampered);
    fs.writeFileSync(auditFile, audit);
    fs.writeFileSync(keyFile, f.app.services.publicKeyPem);
    const cli = await runLethe(['verify', certFile, '--public-key', keyFile, '--audit', auditFile], {
      env: cliEnvironment(f.app, f.baseUrl),
    });
    expect(cli.code).toBe(7);
    expect(cli.stdout).toMatch(/^FAILED at line 2 \(certificate crt_\w+, seq 2\): /);
    expect(cli.stdout.trim().endsWith(reason)).toBe(true);
  }, 120_000);

  it('fails a certificate whose signature was replaced, which only the Ed25519 check can catch', async () => {
    const certificates = await exported('certificates');
    const audit = await exported('audit');
    const [first, second] = certificates.trimEnd().split('\n') as [string, string];
    // The second certificate, re-signed by no one: the first one's signature on it.
    const forged = { ...JSON.parse(second), signature: (JSON.parse(first) as { signature: string }).signature };
    const { page, signIn } = await f.page();
    await signIn(auditor, 'audit');
    await page.getByLabel('Certificates (JSONL)').setInputFiles({
      name: 'c.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(`${first}\n${JSON.stringify(forged)}\n`),
    });
    await page.getByLabel('Audit chain (JSONL)').setInputFiles({
      name: 'a.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(audit),
    });
    await page.getByRole('button', { name: 'Verify files' }).click();
    await expect
      .poll(() => page.locator('[data-testid=verdict-reason]').textContent(), { timeout: 30_000 })
      .toMatch(/^signature invalid:/);
    expect(await page.locator('[data-verdict]').textContent()).toContain('at line 2');
  }, 120_000);
});
