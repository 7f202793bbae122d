/**
 * Runs every workflow type on the local stack, as users run it, and writes each run's history to
 * `test/replay/histories/`. Two erasures are left open where they wait for people, as they may for days: one
 * `partial` under a legal hold, one in `needs-dpo` for copies found outside its closure. A deploy must replay them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessWorkflowId } from '../../src/temporal/access-gateway.js';
import { startTestApp, uniqueTenant, type TestApp } from '../support/app.js';
import { testConfig } from '../support/harness.js';
import { buildSubjectGraph, completeErasure, fileErasure, waitForState } from '../support/erasure-fixture.js';
import { disputeAbout, signOff } from '../support/side-records-fixture.js';
import { sampleEvent, sampleMemory, statedBatch } from '../support/samples.js';
import {
  consolidationWorkflowId,
  disputeWorkflowId,
  rectificationWorkflowId,
  reviewWorkflowId,
} from '../../src/shared/workflow-ids.js';
import { erasureWorkflowId } from '../../src/temporal/erasure-gateway.js';

const HISTORIES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'histories');

describe('recording a history of every workflow type', () => {
  let app: TestApp;
  const recorded: { name: string; workflowId: string }[] = [];
  beforeAll(async () => {
    // Access packages expire after 2 s: the recorded access request runs to its end.
    app = await startTestApp({ config: { LETHE_ACCESS_DELIVERY_SECONDS: '2' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  const record = (name: string, workflowId: string) => recorded.push({ name, workflowId });

  it('runs each workflow type and writes its history', async () => {
    const client = app.worker.client;
    const taskQueue = app.worker.taskQueue;
    const tenant = uniqueTenant();

    const connectivity = `connectivity-${randomUUID()}`;
    await client.workflow.execute('connectivityCheck', { taskQueue, workflowId: connectivity });
    record('connectivity-check', connectivity);

    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent']),
      payload: { events: [sampleEvent()], memories: [sampleMemory()] },
    });
    expect(written.statusCode, written.body).toBe(201);

    const approved = await signOff(app, tenant, 'subject-review', 'checked against the contract');
    const { disputeId, ids } = await disputeAbout(app, tenant, 'subject-dispute');
    const adjudicated = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${disputeId}/resolution`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
      payload: { outcome: 'keep-one', memoryId: ids[1], reason: 'the later call note is right' },
    });
    expect(adjudicated.statusCode, adjudicated.body).toBe(200);

    // A consolidation run: a summary of two records about one subject, written through the ingestion workflow.
    const consolidator = await app.token(tenant, ['agent'], 'agent-c');
    for (const [attribute, content] of [
      ['city', 'Lives in Porto.'],
      ['language', 'Speaks Portuguese.'],
    ]) {
      const fact = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: consolidator,
        payload: {
          events: [sampleEvent({ subjects: ['subject-consolidated'], content })],
          memories: [sampleMemory({ subjects: ['subject-consolidated'], attribute, kind: 'fact', content })],
        },
      });
      expect(fact.statusCode, fact.body).toBe(201);
    }
    const consolidated = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/consolidations`,
      token: consolidator,
      payload: { namespace: 'support', trigger: 'session-end' },
    });
    expect(consolidated.statusCode, consolidated.body).toBe(200);
    expect(consolidated.json()).toMatchObject({ built: 1 });
    record('consolidation', consolidationWorkflowId(tenant, 'support', 'agent-c'));

    const sweep = `retention-record-${randomUUID().slice(0, 8)}`;
    await client.workflow.execute('retentionSweep', { taskQueue, workflowId: sweep, args: [{ tenant }] });
    record('retention-sweep', sweep);

    const admin = await app.token(tenant, ['admin'], 'ops-1');
    expect((await app.request({ method: 'POST', url: `/v1/tenants/${tenant}/reembed`, token: admin })).statusCode).toBe(
      202,
    );
    let reembed: { state: string; workflowId: string };
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      reembed = (await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/reembed`, token: admin })).json();
    } while (reembed.state === 'running');
    expect(reembed.state).toBe('completed');
    record('reembed-tenant', reembed.workflowId);

    // A subject erasure that completes, one that waits under a hold, one that waits for the DPO's decision.
    const complete = await buildSubjectGraph(app, uniqueTenant(), `canary-${randomUUID()}`);
    const completed = await fileErasure(app, complete.tenant, { subjectId: complete.subject });
    expect((await completeErasure(app, complete.tenant, completed, 'extend')).state).toBe('completed');
    const held = await buildSubjectGraph(app, uniqueTenant(), `canary-${randomUUID()}`);
    const placed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${held.tenant}/legal-holds`,
      token: await app.token(held.tenant, ['legal'], 'counsel-1'),
      payload: { scope: { subjectId: held.subject }, caseRef: 'case-2026-101' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    const partial = await fileErasure(app, held.tenant, { subjectId: held.subject });
    expect((await waitForState(app, held.tenant, partial, ['partial'])).state).toBe('partial');
    // Alice's sentence repeated in Bob's memory: a copy outside the closure, which waits for the DPO.
    const copies = uniqueTenant();
    const sentence = `The card on file ends with the number 4929 ${randomUUID().slice(0, 4)} 0000.`;
    for (const [writer, subject, content] of [
      ['agent-a', 'alice', sentence],
      ['agent-b', 'bob', `Bob was told: ${sentence} He will call back on Monday.`],
    ] as const) {
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${copies}/batches`,
        token: await app.token(copies, ['agent'], writer),
        payload: statedBatch([
          sampleMemory({ subjects: [subject], content, attribute: 'payment-card', scope: 'tenant' }),
        ]),
      });
      expect(response.statusCode, response.body).toBe(201);
    }
    const waiting = await fileErasure(app, copies, { subjectId: 'alice' });
    expect((await waitForState(app, copies, waiting, ['needs-dpo'])).state).toBe('needs-dpo');

    // An access request that builds its package, tells the DPO and erases the package when its window ends.
    const dpo = await app.token(complete.tenant, ['dpo'], 'dpo-1');
    const access = await app.request({
      method: 'POST',
      url: `/v1/tenants/${complete.tenant}/subject-rights/access`,
      token: dpo,
      payload: { selector: { subjectId: complete.other }, requestKey: `record-${randomUUID()}` },
    });
    expect(access.statusCode, access.body).toBe(202);
    const accessId = access.json<{ id: string }>().id;
    await client.workflow.getHandle(accessWorkflowId(complete.tenant, accessId)).result();
    record('access-request', accessWorkflowId(complete.tenant, accessId));

    // A rectification a reviewer approves: the corrected value supersedes the old one.
    const toCorrect = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], 'agent-rectify'),
      payload: statedBatch([sampleMemory({ subjects: ['subject-rectify'], attribute: 'invoice-channel' })]),
    });
    expect(toCorrect.statusCode, toCorrect.body).toBe(201);
    const correcting = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/subject-rights/rectification`,
      token: await app.token(tenant, ['dpo'], 'dpo-1'),
      payload: {
        requestKey: `record-${randomUUID()}`,
        memoryId: toCorrect.json<{ memories: { id: string }[] }>().memories[0]!.id,
        content: 'Prefers invoices by post.',
      },
    });
    expect(correcting.statusCode, correcting.body).toBe(202);
    const rectificationId = correcting.json<{ id: string }>().id;
    const corrected = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/subject-rights/rectification/${rectificationId}/decision`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
      payload: { decision: 'approve', reason: 'the customer wrote to say so' },
    });
    expect(corrected.statusCode, corrected.body).toBe(200);
    await client.workflow.getHandle(rectificationWorkflowId(tenant, rectificationId)).result();
    record('rectification-request', rectificationWorkflowId(tenant, rectificationId));

    record('memory-review', reviewWorkflowId(tenant, approved));
    record('dispute-review', disputeWorkflowId(tenant, disputeId));
    record('erasure-completed', erasureWorkflowId(complete.tenant, completed));
    record('erasure-partial-under-hold', erasureWorkflowId(held.tenant, partial));
    record('erasure-needs-dpo', erasureWorkflowId(copies, waiting));
    // The ingestion workflow's id is the stage's: found among this worker's runs.
    for await (const run of client.workflow.list({
      query: `WorkflowType = 'ingestBatch' AND TaskQueue = '${taskQueue}'`,
    })) {
      record('ingest-batch', run.workflowId);
      break;
    }
    expect(recorded.map((r) => r.name)).toContain('ingest-batch');

    for (const { name, workflowId } of recorded) await writeHistory(client, name, workflowId);
    expect(fs.readdirSync(HISTORIES).length).toBeGreaterThanOrEqual(recorded.length);
  });

  it('runs a KEK rotation on a database and keyring of its own and writes its history', async () => {
    // A rotation re-wraps every key of the vault it runs on and destroys older epochs: not the stack's shared one.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-record-rotation-'));
    const uri = new URL(testConfig().mongo.uri);
    uri.pathname = `/lethe_record_rotation_${randomUUID().slice(0, 8)}`;
    const own = await startTestApp({
      config: { MONGODB_URI: uri.toString(), LETHE_KEK_FILE: path.join(dir, 'kek.json') },
    });
    try {
      // A key to re-wrap, so the history holds a re-wrap that did some work.
      const tenant = uniqueTenant();
      const written = await own.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: await own.token(tenant, ['agent']),
        payload: { events: [sampleEvent()], memories: [sampleMemory()] },
      });
      expect(written.statusCode, written.body).toBe(201);
      const workflowId = `kek-rotation-record-${randomUUID().slice(0, 8)}`;
      await own.worker.client.workflow.execute('kekRotation', { taskQueue: own.worker.taskQueue, workflowId });
      await writeHistory(own.worker.client, 'kek-rotation', workflowId);
    } finally {
      await own.runtime.db.dropDatabase().catch(() => undefined);
      await own.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function writeHistory(client: TestApp['worker']['client'], name: string, workflowId: string): Promise<void> {
  fs.mkdirSync(HISTORIES, { recursive: true });
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  // protobufjs's own JSON form of the message (enums by name, 64-bit numbers and bytes as strings).
  const json = temporal.api.history.v1.History.toObject(temporal.api.history.v1.History.fromObject(history), {
    longs: String,
    enums: String,
    bytes: String,
  });
  fs.writeFileSync(path.join(HISTORIES, `${name}.json`), `${JSON.stringify(json, null, 1)}\n`);
}
