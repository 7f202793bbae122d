/**
 * An access and portability request (Art. 15, 20), end to end on the real stack: the DPO files it for a subject, a
 * workflow builds a signed package of everything `locate` and the lineage closure reach, the DPO downloads it, an
 * auditor verifies it offline with `lethe verify`, and the package is erased when its delivery window ends, or
 * earlier when an erasure reaches a record it holds. Canaries are planted in the subject's records and in
 * another subject's; the package holds the first and never the second.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, completeErasure, fileErasure, type SubjectGraph } from '../../support/erasure-fixture.js';
import { cliEnvironment, listenOnRealPort, runLethe } from '../../support/cli-process.js';
import { ExitCode } from '../../../app/cli/exit-codes.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import {
  receivedAccessRequest,
  verifyAccessPackage,
  type AccessPackage,
} from '../../../src/governance/rights/access-request.js';
import { parsePublicKeyPem } from '../../../src/governance/certificates/signing.js';
import { accessWorkflowId } from '../../../src/temporal/access-gateway.js';
import { accessActivitiesOver } from '../../support/access-activities.js';
import type { Role } from '../../../src/governance/auth/principal.js';

interface AccessView {
  id: string;
  state: string;
  counts: Record<string, number>;
  packageSha256: string | null;
  expiresAt: string | null;
  dueAt: string;
}

const DELIVERY_SECONDS = 20;

describe('an access and portability request', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  const tenant = uniqueTenant();
  const canary = `zacc${randomUUID().replaceAll('-', '')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-access-'));
  let requestId: string;
  let pkg: AccessPackage;

  const call = async (method: 'GET' | 'POST', url: string, roles: Role[], principal: string, payload?: object) =>
    app.request({
      method,
      url: `/v1/tenants/${tenant}/subject-rights/access${url}`,
      token: await app.token(tenant, roles, principal),
      ...(payload ? { payload } : {}),
    });
  const waitFor = async (id: string, states: string[], timeoutMs = 120_000): Promise<AccessView> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const view = (await call('GET', `/${id}`, ['dpo'], 'dora')).json<AccessView>();
      if (states.includes(view.state)) return view;
      if (Date.now() > deadline) throw new Error(`access ${id} is ${view.state}, not ${states.join('|')}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  beforeAll(async () => {
    app = await startTestApp({ config: { LETHE_ACCESS_DELIVERY_SECONDS: String(DELIVERY_SECONDS) } });
    graph = await buildSubjectGraph(app, tenant, canary);
    // An agent retrieves the subject's records and puts two of them into a prompt: the package's recipients.
    const token = await app.token(tenant, ['agent'], graph.writer);
    const answer = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrieve`,
      token,
      payload: { query: `codeword invoices ${canary}`, k: 10 },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const { retrievalId, items } = answer.json<{ retrievalId: string; items: { id: string }[] }>();
    const reported = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrievals/${retrievalId}/exposures`,
      token,
      payload: { memoryIds: items.slice(0, 2).map((i) => i.id) },
    });
    expect(reported.statusCode, reported.body).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is filed by the DPO only, idempotently by its key, and names nobody in its state', async () => {
    const key = `acc-${randomUUID()}`;
    const selector = { subjectId: graph.subject };
    expect((await call('POST', '', ['agent'], 'ann', { selector, requestKey: key })).statusCode).toBe(403);
    expect((await call('POST', '', ['admin'], 'adam', { selector, requestKey: key })).statusCode).toBe(403);
    const bad = await call('POST', '', ['dpo'], 'dora', { selector: { subjectId: '' }, requestKey: key });
    expect(bad.statusCode).toBe(400);
    const noKey = await call('POST', '', ['dpo'], 'dora', { selector });
    expect(noKey.json<{ error: { field: string } }>().error.field).toBe('requestKey');

    const filed = await call('POST', '', ['dpo'], 'dora', { selector, requestKey: key });
    expect(filed.statusCode, filed.body).toBe(202);
    const view = filed.json<AccessView>();
    requestId = view.id;
    expect(filed.body).not.toContain(graph.subject);
    // Due one month after receipt (Art. 12(3)).
    expect(Date.parse(view.dueAt) - Date.now()).toBeGreaterThan(27 * 86_400_000);
    const again = await call('POST', '', ['dpo'], 'dora', { selector, requestKey: key });
    expect(again.statusCode).toBe(200);
    expect(again.json<AccessView>().id).toBe(requestId);
    const other = await call('POST', '', ['dpo'], 'dora', { selector: { subjectId: graph.other }, requestKey: key });
    expect(other.statusCode).toBe(409);
    expect(await app.runtime.db.collection(Collections.accessRequests).countDocuments({ tenant })).toBe(1);
  });

  it('builds a signed package of every record the closure reaches, with recipients, and nothing of others', async () => {
    const ready = await waitFor(requestId, ['ready', 'failed']);
    expect(ready.state).toBe('ready');
    // An auditor sees the state but may not download; an agent sees neither.
    expect((await call('GET', `/${requestId}`, ['auditor'], 'audrey')).statusCode).toBe(200);
    expect((await call('GET', `/${requestId}/package`, ['auditor'], 'audrey')).statusCode).toBe(403);
    expect((await call('GET', `/${requestId}`, ['agent'], 'ann')).statusCode).toBe(403);

    const downloaded = await call('GET', `/${requestId}/package`, ['dpo'], 'dora');
    expect(downloaded.statusCode, downloaded.body).toBe(200);
    pkg = downloaded.json<AccessPackage>();
    const ids = pkg.records.map((r) => r.id);
    for (const id of [...graph.events, ...graph.memories]) expect(ids, id).toContain(id);
    for (const id of graph.control) expect(ids, id).not.toContain(id);
    expect(downloaded.body).toContain(canary);
    // The other subject's records stay out, and the record derived from both is listed with its content withheld.
    expect(downloaded.body).not.toContain('Munich');
    expect(downloaded.body).not.toContain('Ben prefers');
    expect(pkg.records.find((r) => r.id === graph.collateral)).toMatchObject({
      reach: 'derived',
      content: null,
      withheld: 'about-others',
      subjects: [],
    });
    // Each memory carries why it is held and for how long.
    const memory = pkg.records.find((r) => r.id === graph.memories[0])!;
    expect(memory).toMatchObject({ type: 'memory', reach: 'located', status: 'active' });
    expect(memory.purpose).toEqual(expect.any(String));
    expect(memory.retentionClass).toEqual(expect.any(String));
    expect(memory.provenance!.eventIds.length).toBeGreaterThan(0);
    // So is the view filed under a segment rather than the subject: the DPO decides on both (Art. 15(4)).
    const viewId = graph.memories[3]!;
    expect(
      pkg.records
        .filter((r) => r.withheld)
        .map((r) => r.id)
        .sort(),
    ).toEqual([graph.collateral, viewId].sort());
    expect(pkg.counts.withheld).toBe(2);
    expect(ready.packageSha256).toBe(pkg.signature.bodySha256);

    // The recipients are exactly the exposure trace of the package's memories.
    const traced = [];
    for (const r of pkg.records.filter((r) => r.type === 'memory'))
      for (const e of await app.services.exposures.exposuresOf(tenant, r.id))
        traced.push(`${r.id}|${e.principal}|${e.retrievalId}|${e.exposedAt ? 'prompt' : 'read'}`);
    const listed = pkg.recipients.map(
      (r) => `${r.recordId}|${r.principal}|${r.retrievalId}|${r.promptAt ? 'prompt' : 'read'}`,
    );
    expect(listed.sort()).toEqual(traced.sort());
    expect(listed.filter((l) => l.endsWith('|prompt'))).toHaveLength(2);

    // Verified in process and offline, by the CLI an auditor runs.
    const key = parsePublicKeyPem(app.services.publicKeyPem);
    expect(verifyAccessPackage(pkg, [key])).toMatchObject({ ok: true, records: pkg.records.length });
    const keyFile = path.join(dir, 'key.pem');
    fs.writeFileSync(keyFile, app.services.publicKeyPem);
    const file = path.join(dir, 'package.json');
    fs.writeFileSync(file, JSON.stringify(pkg, null, 2));
    const verified = await runLethe(['verify', file, '--public-key', keyFile], { env: process.env });
    expect(verified.code, verified.stderr).toBe(ExitCode.ok);
    expect(verified.stdout).toContain('signature valid');
    // One record dropped after signing: caught.
    const tampered = path.join(dir, 'tampered.json');
    fs.writeFileSync(tampered, JSON.stringify({ ...pkg, records: pkg.records.slice(1) }));
    const refused = await runLethe(['verify', tampered, '--public-key', keyFile], { env: process.env });
    expect(refused.code).toBe(ExitCode.verificationFailed);
    expect(refused.stdout).toContain('changed after signing');

    // The answered request's receipt names the package by its digest and is anchored in the audit chain.
    const receipt = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/subject-rights/receipts/${requestId}`,
      token: await app.token(tenant, ['auditor'], 'audrey'),
    });
    expect(receipt.statusCode, receipt.body).toBe(200);
    expect(receipt.json()).toMatchObject({
      right: 'access',
      requestId,
      state: 'ready',
      outcome: { packageSha256: pkg.signature.bodySha256 },
    });
    expect(receipt.body).not.toContain(canary);
    const exported = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/audit`,
      token: await app.token(tenant, ['auditor'], 'audrey'),
    });
    const receiptFile = path.join(dir, 'receipt.json');
    const auditFile = path.join(dir, 'audit.jsonl');
    fs.writeFileSync(receiptFile, receipt.body);
    fs.writeFileSync(auditFile, exported.body);
    const anchored = await runLethe(['verify', receiptFile, '--public-key', keyFile, '--audit', auditFile], {
      env: process.env,
    });
    expect(anchored.code, anchored.stdout).toBe(ExitCode.ok);
    expect(anchored.stdout).toMatch(
      /^ok: access receipt acc_\w+ \(ready\), signature valid .* anchored at audit seq \d+/,
    );
  });

  it('keeps the package sealed at rest, and the workflow history and audit chain name no subject and hold no content', async () => {
    const stored = await app.runtime.db
      .collection<{ _id: string }>(Collections.accessPackages)
      .findOne({ _id: requestId });
    expect(stored).not.toBeNull();
    const parts = await app.runtime.db
      .collection<{ requestId: string; body: string }>(Collections.accessPackageParts)
      .find({ requestId })
      .toArray();
    expect(parts.length).toBeGreaterThan(0);
    for (const part of parts) expect(part.body).toMatch(/^lethe-sealed:v2:kp_/);
    expect(JSON.stringify([stored, parts])).not.toContain(canary);
    const request = await app.runtime.db
      .collection<{ _id: string }>(Collections.accessRequests)
      .findOne({ _id: requestId });
    expect(JSON.stringify(request)).not.toContain(graph.subject);
    const history = await app.services.temporalClient.workflow
      .getHandle(accessWorkflowId(tenant, requestId))
      .fetchHistory();
    const text = JSON.stringify(history);
    expect(text).not.toContain(canary);
    expect(text).not.toContain(graph.subject);
    const actions: string[] = [];
    for await (const entry of app.services.audit.entries(tenant)) {
      if (entry.target === requestId) actions.push(entry.action);
      expect(JSON.stringify(entry)).not.toContain(canary);
    }
    expect(actions).toEqual(
      expect.arrayContaining(['subject-access.filed', 'subject-access.package-built', 'subject-access.downloaded']),
    );
  });

  it('is filed, shown and downloaded through the CLI, and the file verifies offline', async () => {
    const env = {
      ...cliEnvironment(app, await listenOnRealPort(app)),
      LETHE_TOKEN: await app.token(tenant, ['dpo'], 'dora'),
    };
    const filed = await runLethe(
      ['--json', 'access', 'file', '--subject', graph.subject, '--key', `cli-${randomUUID()}`],
      {
        env,
      },
    );
    expect(filed.code, filed.stderr).toBe(ExitCode.ok);
    const id = (JSON.parse(filed.stdout) as { id: string }).id;
    expect(filed.stdout).not.toContain(graph.subject);
    await waitFor(id, ['ready']);
    const shown = await runLethe(['access', 'show', id], { env });
    expect(shown.stdout).toContain('ready');
    const out = path.join(dir, 'cli-package.json');
    const downloaded = await runLethe(['access', 'download', id, '--out', out], { env });
    expect(downloaded.code, downloaded.stderr).toBe(ExitCode.ok);
    expect(fs.readFileSync(out, 'utf8')).toContain(canary);
    // An existing file is never overwritten.
    const again = await runLethe(['access', 'download', id, '--out', out], { env });
    expect(again.code).toBe(ExitCode.usage);
    expect(again.stderr).toContain('--out');
    const keyFile = path.join(dir, 'key.pem');
    const verified = await runLethe(['verify', out, '--public-key', keyFile], { env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(ExitCode.ok);
  }, 120_000);

  it('erases the package when its delivery window ends: its key is shredded and a download is refused as gone', async () => {
    const expired = await waitFor(requestId, ['expired'], (DELIVERY_SECONDS + 60) * 1000);
    expect(expired.state).toBe('expired');
    const gone = await call('GET', `/${requestId}/package`, ['dpo'], 'dora');
    expect(gone.statusCode).toBe(410);
    expect(
      await app.runtime.db.collection<{ _id: string }>(Collections.accessPackages).countDocuments({ _id: requestId }),
    ).toBe(0);
    expect(await app.runtime.db.collection(Collections.accessPackageParts).countDocuments({ requestId })).toBe(0);
    expect(
      await app.services.cipher.vault.idsWithKeys(tenant, [
        `access-package:${requestId}#0`,
        `access-selector:${requestId}`,
      ]),
    ).toEqual([]);
  }, 120_000);

  it('an erasure of the subject erases a package still waiting for delivery', async () => {
    const filed = await call('POST', '', ['dpo'], 'dora', {
      selector: { subjectId: graph.subject },
      requestKey: `acc-${randomUUID()}`,
    });
    const second = filed.json<AccessView>().id;
    expect((await waitFor(second, ['ready'])).state).toBe('ready');
    expect(await app.services.access.getPackage(tenant, second)).not.toBeNull();
    const erasure = await fileErasure(app, tenant, { subjectId: graph.subject });
    expect((await completeErasure(app, tenant, erasure, 'extend')).state).toBe('completed');
    expect(await app.services.access.getPackage(tenant, second)).toBeNull();
    // Still ready on record, its window open: the download answers that the package is gone, not that it is pending.
    const gone = await call('GET', `/${second}/package`, ['dpo'], 'dora');
    expect(gone.statusCode, gone.body).toBe(410);
    expect(
      await app.runtime.db.collection<{ _id: string }>(Collections.accessPackages).countDocuments({ _id: second }),
    ).toBe(0);
  }, 240_000);

  it.each([
    // Held between reading the records and storing the package: the erasure's search for packages holding the erased
    // records runs before this one exists, and its purge note is there when the build checks.
    ['while it is being stored: it is built again without them', 'putPackage'],
    // Held after storing and before checking the notes: the erasure finds the stored package and erases it.
    ['after it is stored and before the build checks: erased, with the selector', 'purgedSince'],
  ] as const)(
    'a package whose records an erasure purges %s',
    async (_when, heldStep) => {
      const raced = uniqueTenant();
      const racedCanary = `zrace${randomUUID().replaceAll('-', '')}`;
      const subjectGraph = await buildSubjectGraph(app, raced, racedCanary);
      const selector = { subjectId: subjectGraph.subject };
      const id = `acc_race_${randomUUID().replaceAll('-', '')}`;
      await app.services.access.create(
        receivedAccessRequest(
          { _id: id, tenant: raced, selectorKind: 'subject', selectorHash: 'h', requester: 'dora' },
          new Date(),
        ),
        selector,
      );
      let reached!: () => void;
      const atStore = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let stores = 0;
      let checks = 0;
      const real = app.services.access;
      const held: typeof real = {
        ...real,
        async putPackage(...args) {
          if (stores++ === 0 && heldStep === 'putPackage') {
            reached();
            await released;
          }
          return real.putPackage(...args);
        },
        async purgedSince(...args) {
          if (checks++ === 0 && heldStep === 'purgedSince') {
            reached();
            await released;
          }
          return real.purgedSince(...args);
        },
      };
      const s = app.services;
      const activities = accessActivitiesOver(s, { access: held });
      const building = activities.buildAccessPackage({ tenant: raced, requestId: id, deliveryWindowMs: 60_000 });
      await atStore;
      const erasure = await fileErasure(app, raced, selector);
      expect((await completeErasure(app, raced, erasure, 'extend')).state).toBe('completed');
      release();
      if (heldStep === 'purgedSince') {
        // The erasure found the stored package and erased it, with the selector: nothing is left to answer from.
        await expect(building).rejects.toThrow(/selector of .* is gone/);
        expect(await real.getPackage(raced, id)).toBeNull();
        const db = app.runtime.db;
        expect(await db.collection<{ _id: string }>(Collections.accessPackages).countDocuments({ _id: id })).toBe(0);
        expect(await db.collection(Collections.accessPackageParts).countDocuments({ requestId: id })).toBe(0);
        expect([stores, checks]).toEqual([1, 1]);
        return;
      }
      const built = await building;
      const stored = await real.getPackage(raced, id);
      expect(stored).not.toBeNull();
      expect(JSON.stringify(stored)).not.toContain(racedCanary);
      expect(stores).toBe(2);
      expect(checks).toBe(2);
      const erased = [...subjectGraph.events, ...subjectGraph.memories];
      for (const record of stored!.records) expect(erased).not.toContain(record.id);
      expect(built.counts).toEqual(stored!.counts);
      const head = await app.runtime.db
        .collection<{ _id: string; recordIds: string[] }>(Collections.accessPackages)
        .findOne({ _id: id });
      expect(head!.recordIds.filter((r) => erased.includes(r))).toEqual([]);
    },
    300_000,
  );
});
