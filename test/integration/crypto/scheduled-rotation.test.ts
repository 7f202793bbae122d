/**
 * The copies' lapse has a date: with the KEK rotation on a schedule, a certificate says by when the log's and backups'
 * copies of the erased content become unreadable, the schedule's run destroys the epochs live at the purge, and the
 * tenant's audit chain then records each destruction with the keyring's own date. This file runs on a database and a
 * KEK keyring of its own, so that its rotation touches no other test's keys.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { testConfig } from '../../support/harness.js';
import { shreddingShown } from '../../support/shredding-page.js';
import { buildSubjectGraph, completeErasure, fileErasure, type SubjectGraph } from '../../support/erasure-fixture.js';
import { ensureKekRotationSchedule, kekRotationScheduleId } from '../../../src/temporal/kek-rotation-schedule.js';
import { ROTATION_RUN_ALLOWANCE_MS } from '../../../src/governance/erasure/erasure-request.js';
import { EPOCH_DESTROYED_ACTION } from '../../../src/governance/keys/epoch-destruction.js';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';
import type { KekRotationResult } from '../../../src/temporal/contracts/kek-rotation.contract.js';

const DAY_MS = 86_400_000;
const kekDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-rotation-'));
const ownDatabase = () => {
  const uri = new URL(testConfig().mongo.uri);
  uri.pathname = `/lethe_rotation_${randomUUID().slice(0, 8)}`;
  return uri.toString();
};

describe('the scheduled KEK rotation dates the copies’ lapse, and the audit chain says when it happened', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let requestId: string;
  let taskQueue: string;

  const shown = () => shreddingShown(app, graph.tenant, requestId);
  const chain = async () => {
    const entries: AuditEntry[] = [];
    for await (const entry of app.services.audit.entries(graph.tenant)) entries.push(entry);
    return entries;
  };

  beforeAll(async () => {
    app = await startTestApp({
      config: {
        MONGODB_URI: ownDatabase(),
        LETHE_KEK_FILE: path.join(kekDir, 'kek.json'),
        LETHE_KEK_ROTATION_EVERY: '1d',
      },
    });
    taskQueue = app.worker.taskQueue;
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    requestId = await fileErasure(app, graph.tenant, { subjectId: graph.subject });
    const done = await completeErasure(app, graph.tenant, requestId, 'extend');
    expect(done.state).toBe('completed');
  }, 300_000);
  afterAll(async () => {
    await ensureKekRotationSchedule({ client: app.services.temporalClient, taskQueue, everyMs: null }).catch(
      () => undefined,
    );
    await app?.runtime.db.dropDatabase().catch(() => undefined);
    await app?.close();
    fs.rmSync(kekDir, { recursive: true, force: true });
  });

  it('the certificate dates the lapse of the log and backup copies: the purge, one interval, one run', async () => {
    const page = await shown();
    const due = new Date(Date.parse(page.at) + DAY_MS + ROTATION_RUN_ALLOWANCE_MS).toISOString();
    expect(page).toMatchObject({ epochs: [1], lapsedAt: null, lapseDue: due });
    const [certificate] = await app.services.certificates.byRequest(graph.tenant, requestId);
    for (const place of ['postgresql:wal', 'backups']) {
      const claim = certificate!.assurance.find((a) => a.place === place);
      expect(claim, place).toMatchObject({ level: 'L3', lapses: { at: due } });
      expect(claim!.statement).toContain('the rotation scheduled every 1 d destroys it by the lapse date');
    }
    // A snapshot's copy of the keyring file never sees a later destruction: its lapse is the snapshot's own.
    expect(certificate!.assurance.find((a) => a.place === 'keyring:local-file')?.lapses).toEqual({
      condition: expect.stringContaining('snapshot or backup holding both the keyring file and the database expires'),
    });
    // The compaction read the snapshot horizon, and the records' level is what it found.
    const request = await app.services.erasureRequests.get(graph.tenant, requestId);
    expect(request?.compactionProof?.checked).toBe(true);
    const records = certificate!.assurance.find((a) => a.place.startsWith('postgresql:memories,'));
    expect(records?.level).toBe(request!.compactionProof!.heldBy ? 'L3' : 'L2');
    // So was the probe samples' compaction after verification.
    expect(request?.probeCompactionProof?.checked).toBe(true);
    const samples = certificate!.assurance.find((a) => a.place === 'postgresql:erasure_probes');
    expect(samples?.level).toBe(request!.probeCompactionProof!.heldBy ? 'L3' : 'L2');
    // Nothing says it happened yet.
    expect((await chain()).filter((e) => e.action === EPOCH_DESTROYED_ACTION)).toEqual([]);
  });

  it('the worker keeps one schedule per deployment at the configured interval: created, kept, updated, deleted', async () => {
    const client = app.services.temporalClient;
    const ensure = (everyMs: number | null) => ensureKekRotationSchedule({ client, taskQueue, everyMs });
    expect(await ensure(DAY_MS)).toBe('created');
    expect(await ensure(DAY_MS)).toBe('kept');
    expect(await ensure(DAY_MS / 2)).toBe('updated');
    const handle = client.schedule.getHandle(kekRotationScheduleId(taskQueue));
    const described = await handle.describe();
    expect(described.spec.intervals?.[0]?.every).toBe(DAY_MS / 2);
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'kekRotation', taskQueue });
    expect(await ensure(null)).toBe('deleted');
    expect(await ensure(null)).toBe('off');
    expect(await ensure(DAY_MS)).toBe('created');
  });

  it('a run of the schedule destroys the epochs live at the purge, and the chain records each with the keyring’s date', async () => {
    const client = app.services.temporalClient;
    const handle = client.schedule.getHandle(kekRotationScheduleId(taskQueue));
    await handle.trigger();
    let started: { workflowId: string; firstExecutionRunId: string } | undefined;
    for (let i = 0; i < 100 && !started; i++) {
      const recent = (await handle.describe()).info.recentActions.at(-1);
      started = recent?.action.workflow;
      if (!started) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(started, 'the schedule started no run').toBeDefined();
    const result = (await client.workflow
      .getHandle(started!.workflowId, started!.firstExecutionRunId)
      .result()) as KekRotationResult;
    expect(result).toMatchObject({ epoch: 2, destroyed: [1], kept: [], recorded: 1 });
    expect(result.rewrapped).toBeGreaterThanOrEqual(graph.control.length);

    const destroyedAt = (await app.runtime.cipher.vault.keks.epochs()).find((e) => e.epoch === 1)?.destroyedAt;
    expect(destroyedAt).toBeInstanceOf(Date);
    const entries = (await chain()).filter((e) => e.action === EPOCH_DESTROYED_ACTION);
    expect(entries).toEqual([
      expect.objectContaining({
        actor: 'kek-rotation-schedule',
        target: 'kek-epoch-1',
        outcome: 'ok',
        details: { epoch: 1, destroyedAt: destroyedAt!.toISOString(), requests: 1 },
      }),
    ]);
    // The DPO's page agrees with the chain, and the promise was kept.
    const page = await shown();
    expect(page.lapsedAt).toBe(destroyedAt!.toISOString());
    expect(Date.parse(page.lapsedAt!)).toBeLessThanOrEqual(Date.parse(page.lapseDue!));

    // A second run destroys the epoch the first began, which no erasure waited on: no tenant is told of it.
    await handle.trigger();
    let second: KekRotationResult | undefined;
    for (let i = 0; i < 150 && !second; i++) {
      const recent = (await handle.describe()).info.recentActions;
      if (recent.length >= 2) {
        const run = recent.at(-1)!.action.workflow;
        second = (await client.workflow
          .getHandle(run.workflowId, run.firstExecutionRunId)
          .result()) as KekRotationResult;
      } else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(second).toMatchObject({ epoch: 3, destroyed: [2], recorded: 0 });
    expect((await chain()).filter((e) => e.action === EPOCH_DESTROYED_ACTION)).toHaveLength(1);
  });
});
