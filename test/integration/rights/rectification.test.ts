/**
 * A rectification (Art. 16), end to end on the real stack. The DPO files a correction of one of Ana's memories; from
 * that moment no agent is served the contested value as current. A reviewer who neither wrote the record nor filed
 * the correction approves it: the corrected value becomes current, the inaccurate one is superseded with its valid
 * time closed, and every record derived from it is flagged stale and never served as current. A correction that asks
 * for the inaccurate value to be erased files an erasure on the `correction` ground, which ends in a certificate and
 * leaves the corrected record in place. A rejected correction gives the record back; an erasure that reaches the
 * record first leaves the correction void, its corrected content shredded.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import {
  buildSubjectGraph,
  completeErasure,
  fileErasure,
  waitForState,
  type SubjectGraph,
} from '../../support/erasure-fixture.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { runLethe } from '../../support/cli-process.js';
import { ExitCode } from '../../../app/cli/exit-codes.js';
import type { Role } from '../../../src/governance/auth/principal.js';

interface RectificationView {
  id: string;
  state: string;
  memoryId: string;
  correctedId: string | null;
  decidedBy: string | null;
  derived: { stale: string[]; erased: string[] };
  erasureRequestId: string | null;
}

interface Served {
  id: string;
  content?: string;
  status: string;
  validTo: string | null;
  contestedBy?: string[];
  stale?: { because: string };
}

describe('a rectification request', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  const tenant = uniqueTenant();
  const canary = `zrec${randomUUID().replaceAll('-', '')}`;
  const corrected = `Ana wants invoices by post; reference ${canary}.`;
  let invoiceRecord: string;
  let requestId: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-rectification-'));

  const call = async (method: 'GET' | 'POST', url: string, roles: Role[], principal: string, payload?: object) =>
    app.request({
      method,
      url: `/v1/tenants/${tenant}/subject-rights/rectification${url}`,
      token: await app.token(tenant, roles, principal),
      ...(payload ? { payload } : {}),
    });
  const file = (payload: object) => call('POST', '', ['dpo'], 'dora', payload);
  const decide = (id: string, reviewer: string, decision: 'approve' | 'reject', roles: Role[] = ['reviewer']) =>
    call('POST', `/${id}/decision`, roles, reviewer, { decision, reason: `decided by ${reviewer} in the test` });

  /** What the graph's own agent is served for a question about the present, by retrieval and by search. */
  const servedAsCurrent = async (query: string) => {
    const token = await app.token(tenant, ['agent'], graph.writer);
    const retrieved = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrieve`,
      token,
      payload: { query, k: 20, intent: 'current' },
    });
    expect(retrieved.statusCode, retrieved.body).toBe(200);
    const searched = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token,
      payload: { query, k: 20, intent: 'current' },
    });
    expect(searched.statusCode, searched.body).toBe(200);
    return {
      retrieved: retrieved.json<{ items: Served[] }>().items,
      searched: searched.json<{ results: { memory: Served }[] }>().results.map((r) => r.memory),
    };
  };
  const readAs = async (id: string, roles: Role[], principal: string, intent: string) =>
    app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/memories/${id}?intent=${intent}`,
      token: await app.token(tenant, roles, principal),
    });

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, tenant, canary);
    invoiceRecord = graph.memories[1]!;
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is filed by the DPO only, refuses odd input by name, and is idempotent by its key', async () => {
    const key = `rec-${randomUUID()}`;
    const body = { requestKey: key, memoryId: invoiceRecord, content: corrected };
    expect((await call('POST', '', ['agent'], graph.writer, body)).statusCode).toBe(403);
    expect((await call('POST', '', ['reviewer'], 'rita', body)).statusCode).toBe(403);
    expect((await call('POST', '', ['admin'], 'adam', body)).statusCode).toBe(403);
    const refusedField = async (payload: object) => {
      const response = await file(payload);
      expect(response.statusCode, response.body).toBe(400);
      return response.json<{ error: { field: string } }>().error.field;
    };
    expect(await refusedField({ ...body, content: 'by post\u0000' })).toBe('content');
    expect(await refusedField({ ...body, content: '' })).toBe('content');
    expect(await refusedField({ ...body, content: 'x'.repeat(40_000) })).toBe('content');
    expect(await refusedField({ ...body, memoryId: 'mem_\u0007' })).toBe('memoryId');
    expect(await refusedField({ ...body, requestKey: '\ud800' })).toBe('requestKey');
    expect(await refusedField({ ...body, eraseInaccurate: 'yes' })).toBe('eraseInaccurate');
    expect(await refusedField({ ...body, extra: 1 })).toBe('extra');
    const missing = await file({ ...body, requestKey: `rec-${randomUUID()}`, memoryId: 'mem_nothing' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json<{ error: { field: string } }>().error.field).toBe('memoryId');

    const filed = await file(body);
    expect(filed.statusCode, filed.body).toBe(202);
    const view = filed.json<RectificationView>();
    requestId = view.id;
    expect(view.state).toBe('awaiting-review');
    // The state shows the corrected content's digest, never the content.
    expect(filed.body).not.toContain(canary);
    const again = await file(body);
    expect(again.statusCode).toBe(200);
    expect(again.json<RectificationView>().id).toBe(requestId);
    const otherContent = await file({ ...body, content: 'Ana wants invoices by fax.' });
    expect(otherContent.statusCode).toBe(409);
    expect(otherContent.json<{ error: { field: string } }>().error.field).toBe('requestKey');
    expect(await app.runtime.db.collection(Collections.rectifications).countDocuments({ tenant })).toBe(1);
    // The corrected content waits sealed: the canary is not in the stored request.
    const stored = await app.runtime.db.collection(Collections.rectifications).findOne({ tenant });
    expect(JSON.stringify(stored)).not.toContain(canary);
  });

  it('shows the proposed content to the reviewer who decides and the DPO who filed it, and to nobody else', async () => {
    const proposal = (roles: Role[], principal: string) => call('GET', `/${requestId}/proposal`, roles, principal);
    for (const [roles, principal] of [
      [['agent'], graph.writer],
      [['auditor'], 'audrey'],
      [['legal'], 'lee'],
      [['admin'], 'adam'],
    ] as [Role[], string][])
      expect((await proposal(roles, principal)).statusCode, roles.join()).toBe(403);
    for (const [roles, principal] of [
      [['reviewer'], 'rita'],
      [['dpo'], 'dora'],
    ] as [Role[], string][]) {
      const shown = await proposal(roles, principal);
      expect(shown.statusCode, shown.body).toBe(200);
      expect(shown.json()).toMatchObject({ id: requestId, memoryId: invoiceRecord, content: corrected });
    }
    const reads = await app.runtime.db
      .collection(Collections.audit)
      .countDocuments({ tenant, target: requestId, action: 'rectification.proposal-read' });
    expect(reads).toBe(2);
  });

  it('has its due date extended by the DPO, two months at most in all, with the reason kept as a keyed hash', async () => {
    const extend = async (months: number, roles: Role[] = ['dpo'], principal = 'dora') =>
      call('POST', `/${requestId}/extension`, roles, principal, { months, reason: 'the customer sent new evidence' });
    const before = (await call('GET', `/${requestId}`, ['dpo'], 'dora')).json<RectificationView & { dueAt: string }>();
    expect((await extend(1, ['reviewer'], 'rita')).statusCode).toBe(403);
    expect((await extend(3)).statusCode).toBe(400);
    const once = await extend(1);
    expect(once.statusCode, once.body).toBe(200);
    const after = once.json<{ dueAt: string; extensionMonths: number }>();
    expect(after.extensionMonths).toBe(1);
    const expected = new Date(before.dueAt);
    expect(Date.parse(after.dueAt)).toBeGreaterThan(expected.getTime() + 27 * 86_400_000);
    const tooMuch = await extend(2);
    expect(tooMuch.statusCode).toBe(409);
    expect(tooMuch.json<{ error: { field: string } }>().error.field).toBe('months');
    expect((await extend(1)).json<{ extensionMonths: number }>().extensionMonths).toBe(2);
    expect(
      JSON.stringify(
        await app.runtime.db.collection(Collections.audit).findOne({ tenant, action: 'rectification.extended' }),
      ),
    ).not.toContain('new evidence');
  });

  it('takes the contested value out of what agents are served as current from filing, not from the decision', async () => {
    const { retrieved, searched } = await servedAsCurrent(`invoices e-mail ${canary}`);
    expect(retrieved.map((m) => m.id)).not.toContain(invoiceRecord);
    expect(searched.map((m) => m.id)).not.toContain(invoiceRecord);
    expect((await readAs(invoiceRecord, ['agent'], graph.writer, 'current')).statusCode).toBe(404);
    // History still shows it, marked as contested; the DPO's duty read sees it too.
    const history = await readAs(invoiceRecord, ['agent'], graph.writer, 'history');
    expect(history.statusCode, history.body).toBe(200);
    expect(history.json<Served>().contestedBy).toEqual([requestId]);
    expect((await readAs(invoiceRecord, ['dpo'], 'dora', 'history')).statusCode).toBe(200);
  });

  it('is decided by a reviewer who neither wrote the record nor filed the correction', async () => {
    const byWriter = await decide(requestId, graph.writer, 'approve');
    expect(byWriter.statusCode, byWriter.body).toBe(403);
    expect(byWriter.json<{ error: { field: string } }>().error.field).toBe('reviewer');
    const byFiler = await decide(requestId, 'dora', 'approve');
    expect(byFiler.statusCode).toBe(403);
    expect((await decide(requestId, 'dora', 'approve', ['dpo'])).statusCode).toBe(403);
    const badReason = await call('POST', `/${requestId}/decision`, ['reviewer'], 'rita', {
      decision: 'approve',
      reason: '',
    });
    expect(badReason.statusCode).toBe(400);
    for (const reason of ['approved\u0000', 'r'.repeat(2001)]) {
      const odd = await call('POST', `/${requestId}/decision`, ['reviewer'], 'rita', { decision: 'approve', reason });
      expect(odd.statusCode, odd.body).toBe(400);
      expect(odd.json<{ error: { field: string } }>().error.field).toBe('reason');
    }
    const unknown = await call('POST', `/${requestId}/decision`, ['reviewer'], 'rita', {
      decision: 'maybe',
      reason: 'r',
    });
    expect(unknown.json<{ error: { field: string } }>().error.field).toBe('decision');
    // Nothing of the refused calls was decided.
    expect((await call('GET', `/${requestId}`, ['dpo'], 'dora')).json<RectificationView>().state).toBe(
      'awaiting-review',
    );

    const approved = await decide(requestId, 'rita', 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    const view = approved.json<RectificationView>();
    expect(view.state).toBe('applied');
    expect(view.decidedBy).toBe('rita');
    expect(view.correctedId).toBeTruthy();
    // The summary of Ana, its segment view, and the collateral contact summary were all built on the wrong value.
    expect(new Set(view.derived.stale)).toEqual(new Set([graph.memories[2], graph.memories[3], graph.collateral]));
    expect(view.erasureRequestId).toBeNull();
    // A second reviewer loses: the request is decided once.
    expect((await decide(requestId, 'ravi', 'reject')).statusCode).toBe(409);
  });

  it('never serves the inaccurate value, or what was built from it, as current again', async () => {
    const view = (await call('GET', `/${requestId}`, ['dpo'], 'dora')).json<RectificationView>();
    const { retrieved, searched } = await servedAsCurrent(`invoices post e-mail ${canary}`);
    for (const served of [retrieved, searched]) {
      const ids = served.map((m) => m.id);
      expect(ids).toContain(view.correctedId);
      for (const stale of [invoiceRecord, ...view.derived.stale]) expect(ids).not.toContain(stale);
      expect(served.some((m) => m.content?.includes('by e-mail'))).toBe(false);
    }
    expect(retrieved.find((m) => m.id === view.correctedId)?.content).toBe(corrected);

    // The old value stays in history, superseded, its valid time ended where the correction's began.
    const old = (await readAs(invoiceRecord, ['agent'], graph.writer, 'history')).json<
      Served & { validFrom: string }
    >();
    const now = (await readAs(view.correctedId!, ['agent'], graph.writer, 'history')).json<
      Served & { validFrom: string }
    >();
    expect(old.status).toBe('superseded');
    expect(old.validTo).toBe(now.validFrom);
    expect(old.contestedBy).toBeUndefined();
    // A derived record is shown flagged to whoever reads its history (a reviewer deciding what to re-derive).
    const summary = await readAs(graph.memories[2]!, ['reviewer'], 'rita', 'history');
    expect(summary.statusCode, summary.body).toBe(200);
    expect(summary.json<Served>().stale?.because).toBe(`rectification:${requestId}`);
    expect((await readAs(graph.memories[2]!, ['agent'], graph.writer, 'current')).statusCode).toBe(404);

    const audit = await app.runtime.db
      .collection(Collections.audit)
      .find({ tenant, target: requestId })
      .project({ action: 1 })
      .toArray();
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['rectification.filed', 'rectification.applied']),
    );
    // Applied, the corrected content lives in its record: the request's sealed copy is shredded.
    expect(await app.services.rectifications.contentOf(tenant, requestId)).toBeNull();
  });

  it('closes with a signed receipt anchored in the audit chain, which lethe verify checks offline', async () => {
    const receiptFor = async (roles: Role[], principal: string) =>
      app.request({
        method: 'GET',
        url: `/v1/tenants/${tenant}/subject-rights/receipts/${requestId}`,
        token: await app.token(tenant, roles, principal),
      });
    expect((await receiptFor(['agent'], graph.writer)).statusCode).toBe(403);
    expect((await receiptFor(['reviewer'], 'rita')).statusCode).toBe(403);
    const fetched = await receiptFor(['auditor'], 'audrey');
    expect(fetched.statusCode, fetched.body).toBe(200);
    const receipt = fetched.json<{ right: string; state: string; outcome: Record<string, unknown> }>();
    expect(receipt).toMatchObject({ right: 'rectification', state: 'applied', requestId });
    expect(receipt.outcome).toMatchObject({ memoryId: invoiceRecord, decidedBy: 'rita' });
    expect(fetched.body).not.toContain(canary);

    const exported = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/audit`,
      token: await app.token(tenant, ['auditor'], 'audrey'),
    });
    expect(exported.statusCode).toBe(200);
    const files = {
      receipt: path.join(dir, 'receipt.json'),
      audit: path.join(dir, 'audit.jsonl'),
      key: path.join(dir, 'key.pem'),
      tampered: path.join(dir, 'tampered.json'),
      cut: path.join(dir, 'cut.jsonl'),
    };
    fs.writeFileSync(files.receipt, fetched.body);
    fs.writeFileSync(files.audit, exported.body);
    fs.writeFileSync(files.key, app.services.publicKeyPem);
    const verify = (file: string, audit: string) =>
      runLethe(['verify', file, '--public-key', files.key, '--audit', audit], { env: process.env });
    const ok = await verify(files.receipt, files.audit);
    expect(ok.stdout, ok.stderr).toMatch(
      new RegExp(`^ok: rectification receipt ${requestId} \\(applied\\), signature valid .*anchored at audit seq \\d+`),
    );
    expect(ok.code).toBe(0);
    // A receipt edited after signing fails, and so does one whose anchor is not in the export.
    fs.writeFileSync(files.tampered, fetched.body.replace('"decidedBy":"rita"', '"decidedBy":"ravi"'));
    const tampered = await verify(files.tampered, files.audit);
    expect(tampered.code).toBe(ExitCode.verificationFailed);
    expect(tampered.stdout).toContain('changed after signing');
    const anchorSeq = fetched.json<{ anchor: { auditSeq: number } }>().anchor.auditSeq;
    const lines = exported.body.split('\n').filter(Boolean);
    fs.writeFileSync(files.cut, `${lines.slice(0, anchorSeq - 1).join('\n')}\n`);
    const cut = await verify(files.receipt, files.cut);
    expect(cut.code).toBe(ExitCode.verificationFailed);
    expect(cut.stdout).toContain('not in the audit export');
  });

  it('can erase the inaccurate value by an erasure with its own certificate, keeping the correction', async () => {
    const codeword = graph.memories[0]!;
    const filed = await file({
      requestKey: `rec-${randomUUID()}`,
      memoryId: codeword,
      content: 'Ana has no codeword on file.',
      eraseInaccurate: true,
    });
    expect(filed.statusCode, filed.body).toBe(202);
    const id = filed.json<RectificationView>().id;
    const approved = await decide(id, 'rita', 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    const view = approved.json<RectificationView>();
    expect(view.erasureRequestId).toBeTruthy();
    const erasure = await completeErasure(app, tenant, view.erasureRequestId!, 'certify');
    expect(erasure.state).toBe('completed');
    expect(erasure.legalGround).toBe('correction');
    expect(erasure.certificateIds.length).toBeGreaterThan(0);
    expect(await app.services.memories.get(tenant, codeword)).toBeNull();
    const kept = await app.services.memories.get(tenant, view.correctedId!);
    expect(kept?.status).toBe('active');
    expect(kept?.content).toBe('Ana has no codeword on file.');
    // The erased value cannot come back as a "correction" of another of her records.
    const back = await file({
      requestKey: `rec-${randomUUID()}`,
      memoryId: view.correctedId!,
      content: `Ana's codeword is ${canary}.`,
    });
    expect(back.statusCode, back.body).toBe(409);
    expect(back.json<{ error: { code: string; field: string } }>().error).toMatchObject({
      code: 'Tombstoned',
      field: 'content',
    });
  }, 240_000);

  it('gives the record back when the correction is rejected', async () => {
    // Named by its subject and attribute: the one current record of Ben's call-time preference.
    const ben = graph.control[1]!;
    const byAttribute = { requestKey: `rec-${randomUUID()}`, content: 'Ben prefers e-mail.' };
    const field = async (payload: object) => (await file(payload)).json<{ error: { field: string } }>().error.field;
    expect(await field({ ...byAttribute, memoryId: ben, subjectId: graph.other, attribute: 'call-time' })).toBe(
      'memoryId',
    );
    expect(await field({ ...byAttribute, subjectId: graph.other })).toBe('attribute');
    expect(await field({ ...byAttribute, attribute: 'call-time' })).toBe('subjectId');
    const none = await file({ ...byAttribute, subjectId: graph.other, attribute: 'shoe-size' });
    expect(none.statusCode).toBe(404);
    expect(none.json<{ error: { field: string } }>().error.field).toBe('attribute');
    const filed = await file({ ...byAttribute, subjectId: graph.other, attribute: 'call-time' });
    expect(filed.statusCode, filed.body).toBe(202);
    expect(filed.json<RectificationView>().memoryId).toBe(ben);
    const id = filed.json<RectificationView>().id;
    expect((await readAs(ben, ['agent'], graph.writer, 'current')).statusCode).toBe(404);
    const rejected = await decide(id, 'rita', 'reject');
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json<RectificationView>().state).toBe('rejected');
    const served = await readAs(ben, ['agent'], graph.writer, 'current');
    expect(served.statusCode, served.body).toBe(200);
    expect(served.json<Served>().contestedBy).toBeUndefined();
    expect(await app.services.rectifications.contentOf(tenant, id)).toBeNull();
  });

  it('is void when an erasure reaches the record first, its corrected content shredded', async () => {
    const raceTenant = uniqueTenant();
    const raceGraph = await buildSubjectGraph(app, raceTenant, canary);
    const record = raceGraph.memories[1]!;
    const filed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${raceTenant}/subject-rights/rectification`,
      token: await app.token(raceTenant, ['dpo'], 'dora'),
      payload: { requestKey: 'race', memoryId: record, content: `Corrected ${canary}` },
    });
    expect(filed.statusCode, filed.body).toBe(202);
    const id = filed.json<RectificationView>().id;
    const erasureId = await fileErasure(app, raceTenant, { subjectId: raceGraph.subject });
    await waitForState(app, raceTenant, erasureId, ['completed']);
    const request = await app.services.rectifications.get(raceTenant, id);
    expect(request?.state).toBe('void');
    expect(await app.services.rectifications.contentOf(raceTenant, id)).toBeNull();
    // Nor its hash: the stored row keeps nothing that would confirm a guess of the correction.
    const row = await app.runtime.db.collection(Collections.rectifications).findOne({ _id: id as never });
    expect(row).toMatchObject({ state: 'void', contentHash: '', contentSealed: null });
    expect(row).not.toHaveProperty('hashKeyId');
    // Filing the same correction again under its key is told why, not compared with a hash that is gone.
    const again = await app.request({
      method: 'POST',
      url: `/v1/tenants/${raceTenant}/subject-rights/rectification`,
      token: await app.token(raceTenant, ['dpo'], 'dora'),
      payload: { requestKey: 'race', memoryId: record, content: `Corrected ${canary}` },
    });
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json<{ error: { field: string; message: string } }>().error).toMatchObject({
      field: 'requestKey',
      message: expect.stringContaining('voided'),
    });
    const late = await app.request({
      method: 'POST',
      url: `/v1/tenants/${raceTenant}/subject-rights/rectification/${id}/decision`,
      token: await app.token(raceTenant, ['reviewer'], 'rita'),
      payload: { decision: 'approve', reason: 'too late' },
    });
    expect(late.statusCode).toBe(409);
    // Nothing about the subject was written back by the correction.
    expect(await app.services.memories.get(raceTenant, `mem_${id}`)).toBeNull();
  }, 240_000);
});
