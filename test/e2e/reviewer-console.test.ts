/// <reference lib="dom" />
/**
 * The reviewer console in a real browser against the real API and a worker: the queue, a high-impact write
 * approved with a reason, a dispute shown side by side and adjudicated, and a writer's own write refused plainly.
 * Each decision is checked where it lands: the record's status in the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueTenant } from '../support/app.js';
import { sampleEvent, sampleMemory } from '../support/samples.js';
import {
  expectNoPageErrors,
  screenshotForDocs,
  seriousAccessibilityViolations,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-page.js';

describe('reviewer console', () => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await startConsoleFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  async function write(tenant: string, writer: string, memory: Parameters<typeof sampleMemory>[0]) {
    const response = await f.app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await f.app.token(tenant, ['agent'], writer),
      // The memory cites an event that states it: the derivation audit admits it as written.
      payload: {
        events: [
          sampleEvent({
            namespace: memory?.namespace ?? 'default',
            content: `Call note: ${sampleMemory(memory).content}`,
          }),
        ],
        memories: [sampleMemory(memory)],
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ memories: { id: string; status: string }[] }>().memories[0]!;
  }

  it('approves a high-impact write from the queue, with its evidence, policy reason and content shown', async () => {
    const tenant = uniqueTenant();
    const written = await write(tenant, 'agent-1', {
      namespace: 'hr',
      kind: 'fact',
      attribute: 'salary',
      content: 'Salary is 52k.',
    });
    expect(written.status).toBe('candidate');
    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['reviewer'], 'rita'), 'review');
    const row = page.locator(`tr[data-item="${written.id}"]`);
    await expect.poll(() => row.textContent()).toContain('sign-off');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await row.getByRole('link').click();
    await expect.poll(() => page.locator('.content').textContent()).toBe('Salary is 52k.');
    expect(await page.locator('.facts').first().textContent()).toContain('Policy reason');

    // A decision needs a reason, and says so by name.
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.locator('#decision-reason-error').textContent()).toContain('Reason: required');
    await page.getByLabel('Reason').fill('matches the signed contract');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('the record is now active');
    expect((await f.app.services.memories.get(tenant, written.id))?.status).toBe('active');
    expectNoPageErrors(errors);
  });

  it('shows a writer deciding on their own write the refusal, plainly', async () => {
    const tenant = uniqueTenant();
    const written = await write(tenant, 'agent-7', {
      namespace: 'hr',
      kind: 'fact',
      attribute: 'salary',
      content: 'Salary is 61k.',
    });
    const { page, signIn } = await f.page();
    await signIn(await f.app.token(tenant, ['reviewer'], 'agent-7'), `review/sign-offs/${written.id}`);
    await page.getByLabel('Reason').fill('looks right');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('Not allowed for this token (403): reviewer: may not decide on a write they made.');
    expect((await f.app.services.memories.get(tenant, written.id))?.status).toBe('candidate');
  });

  it('adjudicates a dispute shown side by side with valid times and trust: keep one, the other is superseded', async () => {
    const tenant = uniqueTenant();
    const first = await write(tenant, 'agent-1', {
      kind: 'fact',
      attribute: 'employer',
      content: 'Works at Acme Corp.',
    });
    const second = await write(tenant, 'agent-2', {
      kind: 'fact',
      attribute: 'employer',
      content: 'Works at Globex Ltd.',
    });
    const [dispute] = await f.app.services.disputes.openFor(tenant, first.id);
    expect(dispute).toBeDefined();
    const { page, signIn, errors } = await f.page();
    await signIn(await f.app.token(tenant, ['reviewer'], 'rita'), 'review');
    await page.getByLabel('Type').selectOption('dispute');
    const row = page.locator(`tr[data-item="${dispute!._id}"]`);
    await expect.poll(() => row.textContent()).toContain('dispute');
    await row.getByRole('link').click();
    const cards = page.locator('.side-by-side article');
    await expect.poll(() => cards.count()).toBe(2);
    const text = await page.locator('.side-by-side').textContent();
    expect(text).toContain('Works at Acme Corp.');
    expect(text).toContain('Works at Globex Ltd.');
    expect(text).toMatch(/Valid/);
    expect(text).toMatch(/confidence/);
    await screenshotForDocs(page, 'reviewer-dispute');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);

    await page.getByLabel('Reason').fill('HR confirmed the move');
    await page.getByRole('button', { name: `Keep ${second.id}` }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Decided');
    await expect.poll(async () => (await f.app.services.disputes.get(tenant, dispute!._id))?.state).not.toBe('open');
    expect((await f.app.services.memories.get(tenant, second.id))?.status).toBe('active');
    expect((await f.app.services.memories.get(tenant, first.id))?.status).toBe('superseded');
    expectNoPageErrors(errors);
  });
});
