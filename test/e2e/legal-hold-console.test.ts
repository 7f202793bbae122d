/// <reference lib="dom" />
/**
 * A legal hold across two consoles in a real browser: legal places a hold on part of a subject's data, the DPO's
 * request stops at `partial` naming the hold, legal sees which request the hold keeps waiting and releases it, and
 * the DPO's page reaches `completed` on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueTenant } from '../support/app.js';
import { buildSubjectGraph } from '../support/erasure-fixture.js';
import {
  expectNoPageErrors,
  seriousAccessibilityViolations,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-page.js';

describe('legal holds in the consoles', () => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await startConsoleFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  it('a DPO with a hold sees partial; legal releases the hold; the DPO sees completed', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(f.app, tenant, 'CANARY-HOLD-CONSOLE');
    const legal = await f.page();
    await legal.signIn(await f.app.token(tenant, ['legal'], 'counsel-1'), 'holds');
    await legal.page.getByLabel('Scope').selectOption('recordIds');
    await legal.page.getByLabel('Record ids').fill(graph.memories[0]!);
    await legal.page.getByLabel('Case reference').fill('case-2026-044');
    await legal.page.getByRole('button', { name: 'Place hold' }).click();
    await expect.poll(() => legal.page.getByRole('status').textContent()).toMatch(/^Hold hold_[\w-]+ placed\.$/);
    const holdId = /Hold (hold_[\w-]+) placed/.exec((await legal.page.getByRole('status').textContent())!)![1]!;
    expect(await seriousAccessibilityViolations(legal.page)).toEqual([]);

    const dpo = await f.page();
    await dpo.signIn(await f.app.token(tenant, ['dpo'], 'dpo-1'), 'dpo');
    await dpo.page.getByLabel('Subject id').fill(graph.subject);
    await dpo.page.getByLabel('Legal ground').selectOption('art17-1a');
    await dpo.page.getByRole('button', { name: 'File request' }).click();
    const state = dpo.page.locator('[data-testid=request-state]');
    await expect.poll(() => state.textContent(), { timeout: 120_000, interval: 500 }).toBe('partial');
    expect(await dpo.page.locator('.facts').textContent()).toContain(holdId);
    const requestId = (await dpo.page.locator('#detail-heading').textContent())!.replace('Request ', '');

    // Legal sees the request the hold keeps waiting, and releases it.
    const row = legal.page.locator(`tr[data-hold="${holdId}"]`);
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain(requestId);
    await row.getByRole('button', { name: `Release hold ${holdId}` }).click();
    await expect.poll(() => legal.page.getByRole('status').textContent()).toContain(`Hold ${holdId} released`);
    await expect.poll(() => legal.page.locator(`tr[data-hold="${holdId}"]`).count()).toBe(0);

    await expect.poll(() => state.textContent(), { timeout: 120_000, interval: 500 }).toBe('completed');
    expect((await f.app.services.erasureRequests.get(tenant, requestId))?.state).toBe('completed');
    expect((await f.app.services.holds.get(tenant, holdId))?.active).toBe(false);
    expectNoPageErrors(legal.errors);
    expectNoPageErrors(dpo.errors);
  }, 240_000);
});
