/// <reference lib="dom" />
// The functions passed to page.evaluate run in the browser: this file type-checks them against the DOM.
/**
 * The DPO's subject-rights console in a real browser, against the real API and a worker: the preview of what Lethe
 * holds about a subject (with who read it), an access request whose signed package is downloaded and accepted by
 * `lethe verify`, and a correction of one memory that a reviewer approves in the reviewer console (the record as it
 * reads now beside the proposal), shown as applied.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSubjectGraph } from '../support/erasure-fixture.js';
import { uniqueTenant } from '../support/app.js';
import { cliEnvironment, runLethe } from '../support/cli-process.js';
import {
  expectNoPageErrors,
  screenshotForDocs,
  seriousAccessibilityViolations,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-page.js';

describe('subject-rights console', () => {
  let f: ConsoleFixture;
  let dir: string;
  beforeAll(async () => {
    f = await startConsoleFixture();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-rights-console-'));
  });
  afterAll(async () => {
    await f?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('previews a subject, downloads an access package lethe verify accepts, and files a correction', async () => {
    const tenant = uniqueTenant();
    const canary = 'CANARY-RIGHTS-CONSOLE';
    const graph = await buildSubjectGraph(f.app, tenant, canary);
    // The graph's agent reads the subject's records: the preview names it as a reader.
    const retrieved = await f.app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrieve`,
      token: await f.app.token(tenant, ['agent'], graph.writer),
      payload: { query: `codeword invoices ${canary}`, k: 10 },
    });
    expect(retrieved.statusCode, retrieved.body).toBe(200);

    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'), 'rights');

    // Preview: validation names the field; then the counts and the readers, with no content on the page.
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.locator('#preview-subjectId-error').textContent()).toBe('Subject id: required');
    await page.getByLabel('Subject id', { exact: true }).fill(graph.subject);
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.locator('[data-testid=preview]').waitFor();
    // The page shows what the API's preview says, whole.
    const api = (
      await f.app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/subject-rights/preview`,
        token: await f.app.token(tenant, ['dpo'], 'dpo-1'),
        payload: { selector: { subjectId: graph.subject } },
      })
    ).json<{ located: { events: number; memories: number }; derived: { total: number; collateral: number } }>();
    expect(api.located.events + api.located.memories).toBeGreaterThan(0);
    expect(await page.locator('[data-testid=preview-located]').textContent()).toBe(
      `${api.located.events} events, ${api.located.memories} memories`,
    );
    expect(await page.locator('[data-testid=preview-derived]').textContent()).toBe(
      `${api.derived.total} (about other subjects: ${api.derived.collateral})`,
    );
    expect(await page.locator(`tr[data-reader="${graph.writer}"]`).count()).toBe(1);
    expect(await page.content()).not.toContain(canary);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);

    // Access: filed, built by the workflow, downloaded whole and verified offline.
    await page.getByLabel('Subject id for an access request').fill(graph.subject);
    await page.getByRole('button', { name: 'File access request' }).click();
    const row = page.locator('tr[data-access]').first();
    await expect
      .poll(() => row.locator('[data-testid=access-state]').textContent(), { timeout: 120_000, interval: 500 })
      .toBe('ready');
    const accessId = (await row.getAttribute('data-access'))!;
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download package ${accessId}` }).click();
    const file = path.join(dir, 'package.json');
    await (await downloading).saveAs(file);
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { records: { id: string; content: string | null }[] };
    expect(pkg.records.map((r) => r.id)).toEqual(expect.arrayContaining([...graph.events.slice(0, 2)]));
    expect(JSON.stringify(pkg)).toContain(canary);
    const keyFile = path.join(dir, 'key.pem');
    fs.writeFileSync(keyFile, f.app.services.publicKeyPem);
    const verified = await runLethe(['verify', file, '--public-key', keyFile], {
      env: cliEnvironment(f.app, f.baseUrl),
    });
    expect(verified.stdout, verified.stderr).toMatch(/^ok: access package acc_\w+ \(\d+ records\), signature valid/m);
    expect(verified.code).toBe(0);

    // Correction: validation names the fields; filed, the record waits for a reviewer.
    await page.getByRole('button', { name: 'File correction' }).click();
    await expect.poll(() => page.locator('#rectify-memoryId-error').textContent()).toBe('Memory id: required');
    expect(await page.locator('#rectify-content-error').textContent()).toBe('Corrected content: required');
    await page.getByLabel('Memory id to correct').fill(graph.memories[1]!);
    await page.getByLabel('Corrected content').fill('Ana wants invoices by post.');
    await page.getByRole('button', { name: 'File correction' }).click();
    const correction = page.locator('tr[data-rectification]').first();
    await expect
      .poll(() => correction.locator('[data-testid=rectification-state]').textContent())
      .toBe('awaiting-review');
    const rectificationId = (await correction.getAttribute('data-rectification'))!;
    // A reviewer decides in the reviewer console: the record as it reads now beside the proposal.
    const reviewer = await f.page();
    await reviewer.signIn(await f.app.token(tenant, ['reviewer'], 'rita'), 'review');
    await reviewer.page.getByRole('link', { name: rectificationId }).click();
    await expect
      .poll(() => reviewer.page.locator('[data-testid=proposed-content]').textContent())
      .toBe('Ana wants invoices by post.');
    expect(await reviewer.page.locator('[data-testid=current-content]').textContent()).toContain('by e-mail');
    expect(await seriousAccessibilityViolations(reviewer.page)).toEqual([]);
    await reviewer.page.getByRole('button', { name: 'Approve correction' }).click();
    await expect
      .poll(() => reviewer.page.locator('#decision-reason-error').textContent())
      .toBe('Reason: required — say why');
    await reviewer.page.getByLabel('Reason').fill('the customer wrote to say so');
    await reviewer.page.getByRole('button', { name: 'Approve correction' }).click();
    await expect.poll(() => reviewer.page.getByRole('status').textContent()).toMatch(/the correction is applied/);
    await screenshotForDocs(reviewer.page, 'reviewer-correction');
    expectNoPageErrors(reviewer.errors);
    // The list follows the API: applied, with the corrected record and the derived records flagged.
    await expect
      .poll(() => correction.locator('[data-testid=rectification-state]').textContent(), { timeout: 30_000 })
      .toBe('applied');
    expect(await correction.textContent()).toMatch(/now mem_rec_\w+ · decided by rita · \d+ derived flagged stale/);
    await screenshotForDocs(page, 'rights');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expectNoPageErrors(errors);
  }, 240_000);

  it('is not offered to a reviewer, and the API refuses a reviewer the DPO data', async () => {
    const tenant = uniqueTenant();
    const { page, signIn } = await f.page();
    await signIn(await f.app.token(tenant, ['reviewer'], 'rita'));
    expect(await page.getByRole('link', { name: 'Subject rights' }).count()).toBe(0);
    await page.goto(`${f.baseUrl}/console/#/rights`);
    await page.getByRole('button', { name: 'Preview' }).waitFor();
    await page.getByLabel('Subject id', { exact: true }).fill('anyone');
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toMatch(/Not allowed for this token \(403\)/);
  });
});
