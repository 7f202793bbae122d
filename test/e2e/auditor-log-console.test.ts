/// <reference lib="dom" />
/**
 * The auditor console's audit log view in a real browser, against the real stack and its witness: the latest
 * checkpoint opens under the log key and carries the stack witness's verified cosignature, a certificate's inclusion
 * proof leads to the root of the checkpoint it carries, and a second visit finds the log consistent with the
 * checkpoint the browser kept. A proof or a root altered on the wire, and a kept checkpoint the log does not extend
 * (a fork of the same size, a larger tree: the log shrank), fail, naming the part.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { formatCheckpoint } from '../../src/governance/audit/log-tree/checkpoint.js';
import { noteSigner, signNote } from '../../src/governance/audit/log-tree/signed-note.js';
import { uniqueTenant } from '../support/app.js';
import { auditEntries } from '../support/audit-entries.js';
import { buildSubjectGraph, completeErasure, fileErasure } from '../support/erasure-fixture.js';
import {
  expectNoPageErrors,
  screenshotForDocs,
  seriousAccessibilityViolations,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-page.js';

const KEPT = (tenant: string) => `lethe.audit-log.last-seen.${tenant}`;

describe('auditor console: the verifiable audit log', () => {
  let f: ConsoleFixture;
  let tenant: string;
  let auditor: string;
  let certificateId: string;

  /** Publishes a checkpoint over the whole log and has the stack witness cosign it; its size. */
  const cosignedCheckpoint = async () => {
    await f.app.services.checkpoints.publish(tenant);
    const latest = (await f.app.services.checkpoints.latest(tenant))!;
    expect(await f.app.services.witnesses([latest])).toEqual({ cosigned: 1, failed: 0 });
    return latest.size;
  };

  beforeAll(async () => {
    f = await startConsoleFixture();
    tenant = uniqueTenant();
    const graph = await buildSubjectGraph(f.app, tenant, 'CANARY-AUDITOR-LOG-CONSOLE');
    const requestId = await fileErasure(f.app, tenant, { subjectId: graph.subject });
    expect((await completeErasure(f.app, tenant, requestId, 'certify')).state).toBe('completed');
    const [certificate] = await f.app.services.certificates.byRequest(tenant, requestId);
    certificateId = certificate!.certificateId;
    auditor = await f.app.token(tenant, ['auditor'], 'aud-1');
  }, 240_000);
  afterAll(async () => {
    await f?.close();
  });

  const checkpointState = (page: Page) => page.locator('[data-checkpoint]').getAttribute('data-checkpoint');
  const consistencyState = (page: Page) => page.locator('[data-consistency]').getAttribute('data-consistency');

  const checkInclusion = async (page: Page) => {
    await page.getByLabel('Certificate id').fill(certificateId);
    await page.getByRole('button', { name: 'Check inclusion in this browser' }).click();
    const verdict = page.locator('[data-inclusion]');
    await expect.poll(() => verdict.getAttribute('data-inclusion'), { timeout: 30_000 }).not.toBeNull();
    return verdict;
  };

  it('verifies the checkpoint, the witness cosignature and an inclusion, and on a second visit that the log grew from what was seen', async () => {
    const size = await cosignedCheckpoint();
    const { page, signIn, errors } = await f.page();
    await signIn(auditor, 'audit');
    await expect.poll(() => checkpointState(page), { timeout: 30_000 }).toBe('ok');
    expect(await page.getByTestId('tree-size').textContent()).toBe(String(size));
    expect(await page.getByTestId('log-signature').textContent()).toContain('signature of this checkpoint verified');
    const witness = page.locator('[data-witness=stack]');
    expect(await witness.getAttribute('data-cosignature')).toBe('verified');
    expect(await witness.textContent()).toContain('cosigned, verified');
    expect(await consistencyState(page)).toBe('first');

    const verdict = await checkInclusion(page);
    expect(await verdict.getAttribute('data-inclusion')).toBe('ok');
    expect(await verdict.textContent()).toContain(`certificate ${certificateId} is recorded at audit seq`);

    // The log grows and a new checkpoint is published; the next visit proves the new tree extends the kept one.
    const head = (await f.app.services.audit.head(tenant))!;
    await f.app.services.audit.appendMany(auditEntries(tenant, 5, head.seq));
    const grown = await cosignedCheckpoint();
    expect(grown).toBeGreaterThan(size);
    await page.reload();
    await expect.poll(() => consistencyState(page), { timeout: 30_000 }).toBe('ok');
    expect(await page.locator('[data-consistency]').textContent()).toMatch(
      new RegExp(
        `^Consistent with the checkpoint you saw on \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(size ${size}\\)`,
      ),
    );
    expect(await page.getByTestId('tree-size').textContent()).toBe(String(grown));
    const kept = await page.evaluate((k) => JSON.parse(localStorage.getItem(k)!) as { size: number }, KEPT(tenant));
    expect(kept.size).toBe(grown);
    expect(await checkInclusion(page).then((v) => v.getAttribute('data-inclusion'))).toBe('ok');
    await screenshotForDocs(page, 'auditor-log');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expectNoPageErrors(errors);
  }, 120_000);

  it('fails the inclusion, at the proof, when a hash of the inclusion proof is altered on the wire', async () => {
    const { page, signIn } = await f.page();
    await page.route('**/certificates/*/anchored', async (route) => {
      const response = await route.fetch();
      const anchored = (await response.json()) as { logAnchor: { inclusionProof: string[] } };
      anchored.logAnchor.inclusionProof[0] = flipFirstByte(anchored.logAnchor.inclusionProof[0]!);
      await route.fulfill({ response, json: anchored });
    });
    await signIn(auditor, 'audit');
    await expect.poll(() => checkpointState(page), { timeout: 30_000 }).toBe('ok');
    const verdict = await checkInclusion(page);
    expect(await verdict.getAttribute('data-inclusion')).toBe('failed');
    expect(await verdict.getAttribute('data-part')).toBe('proof');
    expect(await verdict.textContent()).toContain('FAILED at the inclusion proof');
    expect(await page.getByTestId('inclusion-reason').textContent()).toMatch(
      /^the inclusion proof does not lead from entry \d+ to the checkpoint's root$/,
    );
  }, 120_000);

  it("fails the checkpoint when another root is served in the log's signed note", async () => {
    const { page, signIn } = await f.page();
    await page.route('**/audit/checkpoint', async (route) => {
      const response = await route.fetch();
      const view = (await response.json()) as { note: string; root: string };
      const root = flipFirstByte(view.root);
      await route.fulfill({ response, json: { ...view, root, note: view.note.replace(view.root, root) } });
    });
    await signIn(auditor, 'audit');
    await expect.poll(() => checkpointState(page), { timeout: 30_000 }).toBe('failed');
    expect(await page.getByTestId('log-signature').textContent()).toMatch(
      /^FAILED: signature: the checkpoint is not signed by \S+ \(changed, or another key\)$/,
    );
    // Nothing is kept from a checkpoint that did not verify.
    expect(await page.evaluate((k) => localStorage.getItem(k), KEPT(tenant))).toBeNull();
    // And no inclusion is checked against it.
    await page.getByLabel('Certificate id').fill(certificateId);
    await page.getByRole('button', { name: 'Check inclusion in this browser' }).click();
    await expect
      .poll(() => page.getByRole('alert').allTextContents())
      .toContain('no verified checkpoint of the log: there is no log key to check against');
    expect(await page.locator('[data-inclusion]').count()).toBe(0);
  }, 120_000);

  it('fails a kept checkpoint the log does not extend: another tree of the same size, then a larger one', async () => {
    const size = (await f.app.services.checkpoints.latest(tenant))!.size;
    // Signed with the log's own key: only the proofs, not the signature, can tell these from the real log.
    const log = noteSigner(f.app.services.checkpoints.originOf(tenant), f.app.services.signer);
    const forged = (n: number) => ({
      verifierKey: f.app.services.checkpoints.verifierKeyOf(tenant),
      note: signNote(formatCheckpoint({ origin: log.name, size: n, root: randomBytes(32) }), [log]),
      size: n,
      seenAt: '2026-01-02T03:04:00.000Z',
    });
    const { page, signIn } = await f.page();
    await signIn(auditor, 'audit');
    await expect.poll(() => consistencyState(page), { timeout: 30_000 }).toBe('first');
    for (const [kept, reason] of [
      [forged(size), `two different trees of ${size} entries: the log forked`],
      [forged(size + 7), `the later checkpoint (${size}) is smaller than the earlier (${size + 7}): the log shrank`],
    ] as const) {
      await page.evaluate(([k, v]) => localStorage.setItem(k, v), [KEPT(tenant), JSON.stringify(kept)] as const);
      await page.reload();
      await expect.poll(() => consistencyState(page), { timeout: 30_000 }).toBe('failed');
      expect(await page.locator('[data-consistency]').textContent()).toContain(
        `FAILED against the checkpoint you saw on 2026-01-02 03:04 UTC (size ${kept.size})`,
      );
      expect(await page.getByTestId('consistency-reason').textContent()).toBe(reason);
      // The checkpoint itself still verifies; the kept one stays, as evidence, for the next visit.
      expect(await checkpointState(page)).toBe('ok');
      expect(await page.evaluate((k) => localStorage.getItem(k), KEPT(tenant))).toBe(JSON.stringify(kept));
    }
    await screenshotForDocs(page, 'auditor-log-forked');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
  }, 120_000);
});

/** The same base64 hash with its first byte changed. */
function flipFirstByte(hash: string): string {
  const bytes = Buffer.from(hash, 'base64');
  bytes[0] = bytes[0]! ^ 0xff;
  return bytes.toString('base64');
}
