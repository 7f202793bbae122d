/// <reference lib="dom" />
// The functions passed to page.evaluate run in the browser: this file type-checks them against the DOM.
/**
 * The DPO console in a real browser, against the real API and a worker: filing (by mouse and by keyboard alone),
 * field-named validation, the live timeline, the certificate download that `lethe verify` accepts, and a reviewer's
 * token refused DPO data with a clear message.
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

/** The locate step's counters as the operators' details print them (`locate: located 4 · events 2 · …`). */
function locateCounters(text: string | null): { located: number; events: number; memories: number } {
  const of = (key: string) => Number(new RegExp(`\\b${key} (\\d+)`).exec(text ?? '')?.[1]);
  return { located: of('located'), events: of('events'), memories: of('memories') };
}

describe('DPO console', () => {
  let f: ConsoleFixture;
  let dir: string;
  beforeAll(async () => {
    f = await startConsoleFixture();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-dpo-console-'));
  });
  afterAll(async () => {
    await f?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is served with a strict CSP, and a token is never put in the URL', async () => {
    const response = await fetch(`${f.baseUrl}/console/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(await response.text()).not.toMatch(/<script>|<style>|style=/);

    const tenant = uniqueTenant();
    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'));
    expect(page.url()).not.toContain('eyJ');
    expect(await page.evaluate(() => sessionStorage.getItem('lethe.token'))).toMatch(/^eyJ/);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expectNoPageErrors(errors);
  });

  it('files a request, watches the steps fill in until completed, and downloads a certificate lethe verify accepts', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(f.app, tenant, 'CANARY-DPO-CONSOLE');
    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'), 'dpo');

    // Validation names the field, before anything is sent.
    await page.getByRole('button', { name: 'File request' }).click();
    await expect.poll(() => page.locator('#filing-subjectId-error').textContent()).toBe('Subject id: required');
    await expect.poll(() => page.locator('#filing-legalGround-error').textContent()).toContain('Legal ground');
    expect(await page.locator('#filing-subjectId').getAttribute('aria-invalid')).toBe('true');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);

    await page.getByLabel('Subject id').fill(graph.subject);
    await page.getByLabel('Legal ground').selectOption('art17-1a');
    // Record every render of the timeline: the page polls, and each poll may fill in more steps.
    await page.getByRole('button', { name: 'File request' }).click();
    await page.locator('[data-testid=request-state]').waitFor();
    await page.evaluate(() => {
      const seen: number[] = [];
      (globalThis as unknown as { doneCounts: number[] }).doneCounts = seen;
      const record = () => seen.push(document.querySelectorAll('.timeline [data-state=done]').length);
      record();
      new MutationObserver(record).observe(document.body, {
        subtree: true,
        childList: true,
        attributes: true,
        characterData: true,
      });
    });
    const requestId = (await page.locator('#detail-heading').textContent())!.replace('Request ', '');
    expect(page.url()).toContain(`#/dpo/requests/${requestId}`);
    expect(page.url()).not.toContain(graph.subject);

    await expect
      .poll(() => page.locator('[data-testid=request-state]').textContent(), { timeout: 120_000, interval: 500 })
      .toBe('completed');
    const steps = await page
      .locator('.timeline [data-step]')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-step')}:${e.getAttribute('data-state')}`));
    expect(steps).toEqual(
      ['locate', 'closure', 'authorise', 'tombstone', 'purge', 'expunge', 'verify'].map((s) => `${s}:done`),
    );
    const doneCounts = await page.evaluate(() => (globalThis as unknown as { doneCounts: number[] }).doneCounts);
    // Live progress: the page showed the timeline part-way, not only before and after.
    expect(
      doneCounts.some((n) => n > 0 && n < 7),
      `done counts seen: ${doneCounts.join(',')}`,
    ).toBe(true);
    expect(await page.locator('.timeline [data-step=locate] .counts').textContent()).toMatch(/\d/);
    // Each step says what it did in words, from the same counts the operators' details show.
    const located = locateCounters(await page.locator('.timeline [data-step=locate] .counts').textContent());
    expect(await page.locator('.timeline [data-step=locate] [data-testid=step-sentence]').textContent()).toBe(
      `Found ${located.located} records: ${located.events} event${located.events === 1 ? '' : 's'} and ${located.memories} ${located.memories === 1 ? 'memory' : 'memories'}.`,
    );
    expect(await page.locator('.timeline [data-step=verify] [data-testid=step-sentence]').textContent()).toMatch(
      /^Checked with \d+ probes: nothing of the erased records was found anywhere\.$/,
    );
    await screenshotForDocs(page, 'dpo-request');

    const api = await f.app.services.erasureRequests.get(tenant, requestId);
    expect(api?.state).toBe('completed');
    const certificateId = api!.certificateIds[0]!;
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download certificate ${certificateId}` }).click();
    const file = path.join(dir, 'certificate.json');
    await (await downloading).saveAs(file);
    const keyFile = path.join(dir, 'key.pem');
    fs.writeFileSync(keyFile, f.app.services.publicKeyPem);
    const verified = await runLethe(['verify', file, '--public-key', keyFile], {
      env: cliEnvironment(f.app, f.baseUrl),
    });
    expect(verified.stdout).toMatch(/^ok: 1 certificate \(seq 1–1\)/);
    expect(verified.code).toBe(0);

    // The list shows the request with its state and GDPR due date.
    await page.getByRole('link', { name: '← All requests' }).click();
    const row = page.locator(`tr[data-request="${requestId}"]`);
    await expect.poll(() => row.textContent()).toContain('completed');
    expect(await row.textContent()).toContain(api!.dueAt.toISOString().slice(0, 10));
    await screenshotForDocs(page, 'dpo-list');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expectNoPageErrors(errors);
  }, 180_000);

  it('files a request with the keyboard alone', async () => {
    const tenant = uniqueTenant();
    const { page, signIn } = await f.page();
    await signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'), 'dpo');
    await page.locator('body').focus();
    // Tab to the subject field from the top of the page, with visible focus on the way.
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate(() => document.activeElement?.id)) === 'filing-subjectId') break;
    }
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filing-subjectId');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe('none');
    await page.keyboard.type('subject-keyboard');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filing-legalGround');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=request-state]').waitFor();
    const requestId = (await page.locator('#detail-heading').textContent())!.replace('Request ', '');
    const filed = await f.app.services.erasureRequests.get(tenant, requestId);
    expect(filed?.selectorKind).toBe('subjectId');
    expect(filed?.legalGround).toBe('art17-1a');
  });

  it("shows a reviewer's token a clear refusal instead of DPO data (the API answers 403)", async () => {
    const tenant = uniqueTenant();
    const { page, signIn } = await f.page();
    const refusals: number[] = [];
    page.on('response', (r) => r.url().includes('/erasure-requests') && refusals.push(r.status()));
    await signIn(await f.app.token(tenant, ['reviewer'], 'rita'), 'dpo');
    const alert = page.getByRole('alert').first();
    await expect.poll(() => alert.textContent()).toContain('Not allowed for this token (403)');
    expect(await alert.textContent()).toContain('erasure.read');
    expect(refusals).toContain(403);
    expect(await page.locator('table.requests').count()).toBe(0);
    // The reviewer's own tabs do not offer the DPO console.
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).toEqual(['Review queue']);
  });
});
