/// <reference lib="dom" />
// The functions passed to page.evaluate run in the browser: this file type-checks them against the DOM.
/**
 * One page per data subject in a real browser, against the real API and a worker: the DPO types the subject's id
 * once and answers the subject's letter from there — what Lethe holds and who read it, an access package filed and
 * downloaded (accepted by `lethe verify`), a correction a reviewer decides, a restriction filed (by keyboard alone)
 * and lifted, and an erasure filed — while a role that may not use a right is not offered it, and a reviewer's
 * direct visit is refused in words.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { buildSubjectGraph } from '../support/erasure-fixture.js';
import { sampleMemory, statedBatch } from '../support/samples.js';
import { uniqueTenant } from '../support/app.js';
import { cliEnvironment, runLethe } from '../support/cli-process.js';
import {
  expectNoPageErrors,
  screenshotForDocs,
  seriousAccessibilityViolations,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-page.js';

/** The subject's request of this kind on the page, newest first. */
const requestRow = (page: Page, kind: string) => page.locator(`tr[data-subject-request][data-kind=${kind}]`).first();
const stateOf = (page: Page, kind: string) =>
  requestRow(page, kind).locator('[data-testid=subject-request-state]').textContent();

/** Presses Tab until the element with this id has the focus (the page has no more than `most` stops before it). */
async function tabTo(page: Page, id: string, most = 80): Promise<void> {
  for (let i = 0; i < most; i++) {
    if ((await page.evaluate(() => document.activeElement?.id)) === id) return;
    await page.keyboard.press('Tab');
  }
  expect(await page.evaluate(() => document.activeElement?.id)).toBe(id);
}

describe('the data subject page', () => {
  let f: ConsoleFixture;
  let dir: string;
  beforeAll(async () => {
    f = await startConsoleFixture();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-subject-page-'));
  });
  afterAll(async () => {
    await f?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("answers a subject's letter from one page: holdings and readers, access, correction, restriction and erasure", async () => {
    const tenant = uniqueTenant();
    const canary = 'CANARY-SUBJECT-PAGE';
    const graph = await buildSubjectGraph(f.app, tenant, canary);
    const retrieved = await f.app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrieve`,
      token: await f.app.token(tenant, ['agent'], graph.writer),
      payload: { query: `codeword invoices ${canary}`, k: 10 },
    });
    expect(retrieved.statusCode, retrieved.body).toBe(200);

    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'), 'subjects');

    // The id, once: validation names the field; the address then names a handle, never the subject.
    await page.getByRole('button', { name: 'Open subject' }).click();
    await expect.poll(() => page.locator('#subject-id-error').textContent()).toBe('Subject id: required');
    await page.getByLabel('Subject id', { exact: true }).fill(graph.subject);
    await page.getByRole('button', { name: 'Open subject' }).click();
    await page.locator('[data-testid=preview-located]').waitFor();
    expect(page.url()).toMatch(/#\/subjects\/s-[0-9a-f]{8}$/);
    expect(page.url()).not.toContain(graph.subject);

    // What Lethe holds and who read it: as the API's preview says, with no content on the page.
    const api = (
      await f.app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/subject-rights/preview`,
        token: await f.app.token(tenant, ['dpo'], 'dpo-1'),
        payload: { selector: { subjectId: graph.subject } },
      })
    ).json<{ located: { events: number; memories: number }; derived: { total: number; collateral: number } }>();
    expect(await page.locator('[data-testid=preview-located]').textContent()).toBe(
      `${api.located.events} events, ${api.located.memories} memories`,
    );
    expect(await page.locator('[data-testid=preview-derived]').textContent()).toBe(
      `${api.derived.total} (about other subjects: ${api.derived.collateral})`,
    );
    expect(await page.locator(`tr[data-reader="${graph.writer}"]`).count()).toBe(1);
    await expect
      .poll(() => page.locator('[data-testid=subject-requests] td').first().textContent())
      .toBe('No request about this subject yet.');
    expect(await page.content()).not.toContain(canary);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);

    // Access: the subject is filled in; the package is built, downloaded from the subject's list and verified.
    expect(await page.locator('#access-subjectId').inputValue()).toBe(graph.subject);
    await page.getByRole('button', { name: 'File access request' }).click();
    await expect.poll(() => stateOf(page, 'access'), { timeout: 120_000, interval: 500 }).toBe('ready');
    const accessId = (await requestRow(page, 'access').getAttribute('data-subject-request'))!;
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download package ${accessId}` }).click();
    const file = path.join(dir, 'package.json');
    await (await downloading).saveAs(file);
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { records: { id: string }[] };
    expect(pkg.records.map((r) => r.id)).toEqual(expect.arrayContaining([...graph.events.slice(0, 2)]));
    const keyFile = path.join(dir, 'key.pem');
    fs.writeFileSync(keyFile, f.app.services.publicKeyPem);
    const verified = await runLethe(['verify', file, '--public-key', keyFile], {
      env: cliEnvironment(f.app, f.baseUrl),
    });
    expect(verified.stdout, verified.stderr).toMatch(
      new RegExp(`^ok: access package ${accessId} \\(\\d+ records\\)`, 'm'),
    );

    // Correction: the subject's memories are offered; a reviewer decides in the reviewer console.
    expect(
      await page
        .locator('#rectify-subject-memories option')
        .evaluateAll((os) => os.map((o) => o.getAttribute('value'))),
    ).toEqual(expect.arrayContaining([graph.memories[1]]));
    await page.getByLabel('Memory id to correct').fill(graph.memories[1]!);
    await page.getByLabel('Corrected content').fill('Ana wants invoices by post.');
    await page.getByRole('button', { name: 'File correction' }).click();
    await expect.poll(() => stateOf(page, 'correction')).toBe('awaiting-review');
    const correctionId = (await requestRow(page, 'correction').getAttribute('data-subject-request'))!;
    const reviewer = await f.page();
    await reviewer.signIn(await f.app.token(tenant, ['reviewer'], 'rita'), 'review');
    await reviewer.page.getByRole('link', { name: correctionId }).click();
    await reviewer.page.getByLabel('Reason').fill('the customer wrote to say so');
    await reviewer.page.getByRole('button', { name: 'Approve correction' }).click();
    await expect.poll(() => reviewer.page.getByRole('status').textContent()).toMatch(/the correction is applied/);
    await expect.poll(() => stateOf(page, 'correction'), { timeout: 30_000 }).toBe('applied');
    expect(await requestRow(page, 'correction').textContent()).toMatch(/now mem_rec_\w+, decided by rita/);

    // Restriction: validation names the ground and the reason; each ground says when it applies.
    await page.getByRole('button', { name: 'File restriction' }).click();
    await expect
      .poll(() => page.locator('#restrict-legalGround-error').textContent())
      .toBe('Legal ground: choose the ground the subject relies on');
    expect(await page.locator('#restrict-reason-error').textContent()).toBe(
      'Reason: required — say why, in your words',
    );
    expect(await page.locator('#restrict-ground-art18-1a-when').textContent()).toContain('contests the accuracy');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await page.getByLabel('Art. 18(1)(a)').check();
    await page.getByLabel('Reason', { exact: true }).fill('Ana contests the invoice channel');
    await page.getByRole('button', { name: 'File restriction' }).click();
    await expect.poll(() => stateOf(page, 'restriction')).toBe('in force');
    const restrictionId = (await requestRow(page, 'restriction').getAttribute('data-subject-request'))!;
    await page.getByRole('button', { name: `Lift restriction ${restrictionId}` }).click();
    await page.getByRole('button', { name: 'Lift restriction', exact: true }).click();
    await expect
      .poll(() => page.locator(`#lift-reason-${restrictionId}-error`).textContent())
      .toBe('Reason: required — say why agents may read the records again');
    await page.getByLabel(`Reason for lifting ${restrictionId}`).fill('the accuracy was checked');
    await page.getByRole('button', { name: 'Lift restriction', exact: true }).click();
    await expect.poll(() => stateOf(page, 'restriction')).toMatch(/^lifted \d{4}-\d{2}-\d{2}/);
    const lifted = await f.app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/subject-rights/restrictions/${restrictionId}`,
      token: await f.app.token(tenant, ['dpo'], 'dpo-1'),
    });
    expect(lifted.json<{ active: boolean; liftedBy: string }>()).toMatchObject({ active: false, liftedBy: 'dpo-1' });

    // Erasure: filed from the page for the subject; its steps read as sentences on the request's page.
    await page.locator('#filing-legalGround').selectOption('art17-1a');
    await page.getByRole('button', { name: 'File request' }).click();
    await expect.poll(() => requestRow(page, 'erasure').count()).toBe(1);
    const erasureId = (await requestRow(page, 'erasure').getAttribute('data-subject-request'))!;
    const filed = await f.app.services.erasureRequests.get(tenant, erasureId);
    expect(filed).toMatchObject({ selectorKind: 'subjectId', legalGround: 'art17-1a' });
    await screenshotForDocs(page, 'subject');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await requestRow(page, 'erasure').getByRole('link', { name: erasureId }).click();
    await expect
      .poll(() => page.locator('[data-testid=request-state]').textContent(), { timeout: 120_000, interval: 500 })
      .toBe('completed');
    expect(await page.locator('.timeline [data-step=locate] [data-testid=step-sentence]').textContent()).toMatch(
      /^Found \d+ records?: \d+ events? and \d+ memor(y|ies)\.$/,
    );
    expectNoPageErrors(errors);
    expectNoPageErrors(reviewer.errors);
  }, 300_000);

  it('files a restriction with the keyboard alone', async () => {
    const tenant = uniqueTenant();
    const subject = 'subject-keyboard';
    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'), 'subjects');
    await page.locator('body').focus();
    await tabTo(page, 'subject-id');
    await page.keyboard.type(subject);
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=restriction-form]').waitFor();
    // The kind radios, then the grounds: Tab enters each group, Space chooses.
    await tabTo(page, 'restrict-ground-art18-1a');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('restrict-reason');
    await page.keyboard.type('the subject contests the accuracy');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('File restriction');
    await page.keyboard.press('Enter');
    await expect.poll(() => stateOf(page, 'restriction')).toBe('in force');
    const listed = await f.app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/subject-rights/restrictions`,
      token: await f.app.token(tenant, ['dpo'], 'dpo-1'),
    });
    expect(listed.json<{ items: { kind: string; legalGround: string; filedBy: string }[] }>().items).toEqual([
      expect.objectContaining({ kind: 'restriction', legalGround: 'art18-1a', filedBy: 'dpo-1' }),
    ]);
    expectNoPageErrors(errors);
  });

  it("files an objection to named purposes, and shows the API's refusal of a duty purpose on its field", async () => {
    const tenant = uniqueTenant();
    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'), 'subjects');
    await page.getByLabel('Subject id', { exact: true }).fill('subject-objecting');
    await page.getByRole('button', { name: 'Open subject' }).click();
    await page.getByLabel('Object to named purposes (Art. 21)').check();
    // The grounds offered are the objection's: Art. 21, each saying when it applies.
    expect(await page.locator('input[name=restrict-ground]').evaluateAll((is) => is.map((i) => i.id))).toEqual([
      'restrict-ground-art21-1',
      'restrict-ground-art21-2',
      'restrict-ground-art21-6',
    ]);
    expect(await page.locator('#restrict-ground-art21-2-when').textContent()).toContain('direct marketing');
    await page.getByLabel('Art. 21(2)').check();
    await page.getByLabel('Purposes objected to').fill('marketing, audit');
    await page.getByLabel('Reason', { exact: true }).fill('the subject wrote to stop marketing');
    await page.getByRole('button', { name: 'File objection' }).click();
    await expect
      .poll(() => page.locator('#restrict-purposes-error').textContent())
      .toContain('a duty read cannot be objected to');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await page.getByLabel('Purposes objected to').fill('marketing');
    await page.getByRole('button', { name: 'File objection' }).click();
    await expect.poll(() => stateOf(page, 'objection')).toBe('in force');
    expect(await requestRow(page, 'objection').locator('td').first().textContent()).toBe('Objection (marketing)');
    // The browser logs the API's one refusal (400, the duty purpose); nothing else went wrong in the page.
    expect(errors.filter((e) => e.includes('status of 400'))).toHaveLength(1);
    expectNoPageErrors(errors.filter((e) => !e.includes('status of 400')));
  });

  it('shows an erasure that found a copy outside the request waiting for the DPO, with both decisions explained', async () => {
    const tenant = uniqueTenant();
    const card = `4929 ${String(Math.floor(Math.random() * 1e4)).padStart(4, '0')} 0000 ${randomUUID().slice(0, 4)}`;
    const sentence = `The card on file ends with the number ${card}.`;
    const write = async (writer: string, subject: string, content: string) => {
      const response = await f.app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: await f.app.token(tenant, ['agent'], writer),
        payload: statedBatch([
          sampleMemory({ subjects: [subject], content, attribute: 'payment-card', scope: 'tenant' }),
        ]),
      });
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ memories: { id: string }[] }>().memories[0]!.id;
    };
    await write('agent-a', 'alice', sentence);
    const copy = await write('agent-b', 'bob', `Bob was told: ${sentence} He will call back on Monday.`);

    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'), 'subjects');
    await page.getByLabel('Subject id', { exact: true }).fill('alice');
    await page.getByRole('button', { name: 'Open subject' }).click();
    await page.locator('#filing-legalGround').selectOption('art17-1a');
    await page.getByRole('button', { name: 'File request' }).click();
    await requestRow(page, 'erasure').getByRole('link').click();
    await expect
      .poll(() => page.locator('[data-testid=request-state]').textContent(), { timeout: 120_000, interval: 500 })
      .toBe('needs-dpo');
    const finding = page.locator(`tr[data-finding="${copy}"]`);
    await expect.poll(() => finding.getAttribute('data-resolution')).toBe('open');
    expect(await finding.textContent()).toContain('an erased sentence in the search index');
    expect(await finding.textContent()).toContain('waiting for your decision');
    const decisions = await page.locator('dl.decisions').textContent();
    expect(decisions).toMatch(/Erase the copies too.*erased like the rest.*certificate covers them/s);
    expect(decisions).toMatch(/Certify with the copies stated.*certificate names them as found and not erased/s);
    expect(await page.content()).not.toContain(card);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshotForDocs(page, 'dpo-findings');

    await page.getByRole('button', { name: 'Erase the copies too' }).click();
    await expect
      .poll(() => page.locator('#findings-reason-error').textContent())
      .toBe('Reason: required — say why you decide so');
    await page.getByLabel('Reason for your decision').fill('it is the same card');
    await page.getByRole('button', { name: 'Erase the copies too' }).click();
    await expect
      .poll(() => page.locator('[data-testid=request-state]').textContent(), { timeout: 120_000, interval: 500 })
      .toBe('completed');
    expect(await finding.getAttribute('data-resolution')).toBe('extended');
    expect(await finding.textContent()).toContain('erased by this request too');
    expectNoPageErrors(errors);
  }, 300_000);

  it('offers an admin only the erasure it may file, and refuses a reviewer in words (the API answers 403)', async () => {
    const tenant = uniqueTenant();
    const admin = await f.page();
    await admin.signIn(await f.app.token(tenant, ['admin'], 'ops-1'), 'subjects');
    await admin.page.getByLabel('Subject id', { exact: true }).fill('subject-admin');
    await admin.page.getByRole('button', { name: 'Open subject' }).click();
    await admin.page.getByRole('heading', { name: 'Act on a right' }).waitFor();
    expect(await admin.page.getByRole('button', { name: 'File request' }).count()).toBe(1);
    for (const action of ['File access request', 'File correction', 'File restriction'])
      expect(await admin.page.getByRole('button', { name: action }).count(), action).toBe(0);

    const { page, signIn } = await f.page();
    await signIn(await f.app.token(tenant, ['reviewer'], 'rita'), 'subjects/s-0123abcd');
    await expect
      .poll(() => page.locator('[data-testid=subject-refusal]').textContent())
      .toMatch(/Not allowed for this token: the data subject page is for the DPO/);
    expect(await page.getByRole('alert').count()).toBe(1);
    expect(await page.locator('[data-testid=subject-page]').count()).toBe(0);
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).toEqual(['Review queue']);
    const refused = await f.app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/subject-rights/subject-requests`,
      token: await f.app.token(tenant, ['reviewer'], 'rita'),
      payload: { selector: { subjectId: 'subject-admin' } },
    });
    expect(refused.statusCode).toBe(403);
  });
});
