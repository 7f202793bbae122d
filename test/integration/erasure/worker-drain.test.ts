/**
 * A worker stopped with SIGTERM in the middle of an erasure's purge (a deployment rolling it): it stops polling,
 * lets the purge in flight finish and report, and exits 0 within its grace. A new worker on the same task queue
 * carries the request to its end exactly once: one certificate, each audit entry once. The worker's own listener
 * serves `/healthz` and, behind the metrics token, `/metrics`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createServices, type Services } from '../../../app/services.js';
import type { Runtime } from '../../../app/runtime.js';
import { buildApiServer } from '../../../app/api/server.js';
import { mintToken } from '../../../src/governance/auth/tokens.js';
import type { ErasureRequest } from '../../../src/governance/erasure/erasure-request.js';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import { TEST_INDEX_SETTINGS, uniqueTenant } from '../../support/app.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { startWorkerProcess, tail, type WorkerExit, type WorkerProcess } from '../../support/worker-process.js';
import { freePort } from '../../../stack/processes.js';
import { parseExposition, valueOf } from '../../support/prometheus-text.js';

/** Records of the subject (half events, half memories): a purge that takes a few seconds on the local stack. */
const MEMORIES = 300;
const SUBJECT = 'subject-drained';
const GRACE_MS = 20_000;
/** What the worker adds to the grace before it gives up (cancelled activities report in it). */
const CANCEL_MARGIN_MS = 5000;
const METRICS_TOKEN = `metrics-${randomUUID()}`;

describe('a worker stopped with SIGTERM in the middle of the purge', () => {
  const tenant = uniqueTenant();
  const taskQueue = uniqueId('tq');
  const workers: WorkerProcess[] = [];
  const metricsPorts: number[] = [];
  let runtime: Runtime;
  let services: Services;
  let api: FastifyInstance;
  let requestId: string;
  let stepAtSignal: string;
  let firstExit: WorkerExit;
  let final: ErasureRequest;

  const token = (roles: ('agent' | 'dpo')[]) =>
    mintToken(runtime.config.tokens.hs256Secret!, { id: uniqueId('p'), tenant, roles }, 600);
  const current = async () => (await services.erasureRequests.get(tenant, requestId))!;
  const startWorker = async () => {
    const port = await freePort();
    metricsPorts.push(port);
    const worker = startWorkerProcess({
      taskQueue,
      env: {
        LETHE_SHUTDOWN_GRACE_MS: String(GRACE_MS),
        LETHE_WORKER_METRICS_PORT: String(port),
        LETHE_METRICS_TOKEN: METRICS_TOKEN,
      },
    });
    workers.push(worker);
    await worker.ready(services.temporalClient);
    return { worker, url: `http://127.0.0.1:${port}` };
  };

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 100) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  beforeAll(async () => {
    runtime = testRuntime();
    services = createServices(runtime, { taskQueue, indexSettings: TEST_INDEX_SETTINGS });
    await services.ensureIndexes();
    // The worker process would create the tenant's index with the production lease sync (30 s): create it here.
    await services.index.ensureTenantIndex(tenant);
    api = await buildApiServer({
      log: runtime.log,
      probes: runtime.probes,
      services,
      tokenKeys: { hs256Secret: runtime.config.tokens.hs256Secret! },
    });
    await startWorker();
    const events = Array.from({ length: MEMORIES }, (_, i) =>
      sampleEvent({ subjects: [SUBJECT], content: `The customer asked about invoice ${i}.` }),
    );
    const memories = Array.from({ length: MEMORIES }, (_, i) =>
      sampleMemory({
        subjects: [SUBJECT],
        kind: 'fact',
        attribute: `invoice-${i}`,
        content: `The customer asked about invoice ${i}.`,
        provenance: { eventIds: [`#${i}`], parentIds: [], derivationRule: 'extract-fact' },
      }),
    );
    const written = await api.inject({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      headers: { authorization: `Bearer ${await token(['agent'])}` },
      payload: { events, memories },
    });
    expect(written.statusCode, written.body).toBe(201);
  }, 170_000);

  afterAll(async () => {
    if (requestId && final?.state !== 'completed') {
      await services.temporalClient.workflow
        .getHandle(erasureWorkflowId(tenant, requestId))
        .terminate('test cleanup')
        .catch(() => undefined);
    }
    for (const worker of workers) worker.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.waitExit()));
    await api?.close();
    await runtime?.close();
  });

  it("serves /healthz, and /metrics only with the metrics token, on the worker's own port", async () => {
    const url = `http://127.0.0.1:${metricsPorts[0]}`;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const scraped = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(valueOf(parseExposition(await scraped.text()), 'lethe_process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('exits 0 within its grace once the purge in flight has finished and reported', async () => {
    const filed = await api.inject({
      method: 'POST',
      url: `/v1/tenants/${tenant}/erasure-requests`,
      headers: { authorization: `Bearer ${await token(['dpo'])}` },
      payload: { selector: { subjectId: SUBJECT }, legalGround: 'art17-1a' },
    });
    expect(filed.statusCode, filed.body).toBe(202);
    requestId = filed.json<{ id: string }>().id;
    const first = workers[0]!;
    await until(
      'the purge to be under way',
      async () => {
        const r = await current();
        const purge = r.steps.find((s) => s.step === 'purge');
        if (purge?.state === 'done' || ['completed', 'needs-operator', 'rejected'].includes(r.state)) {
          throw new Error(`the purge finished before the signal (state ${r.state}): make the subject bigger`);
        }
        return purge?.state === 'running' ? true : undefined;
      },
      120_000,
      50,
    );
    stepAtSignal = 'purge';
    const signalledAt = Date.now();
    first.kill('SIGTERM');
    firstExit = await Promise.race([
      first.waitExit(),
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`no exit within the grace; log:\n${tail(first.logFile)}`)),
          GRACE_MS + CANCEL_MARGIN_MS + 10_000,
        ),
      ),
    ]);
    console.log(`SIGTERM during the ${stepAtSignal} step; the worker exited after ${Date.now() - signalledAt} ms`);
    expect(firstExit, tail(first.logFile)).toEqual({ code: 0, signal: null });

    // The purge that was in flight finished on the stopping worker; no activity failed or timed out.
    const history = await services.temporalClient.workflow
      .getHandle(erasureWorkflowId(tenant, requestId))
      .fetchHistory();
    const events = history.events ?? [];
    const failed = events.filter(
      (e) =>
        e.activityTaskFailedEventAttributes ||
        e.activityTaskTimedOutEventAttributes ||
        e.activityTaskCanceledEventAttributes,
    );
    expect(failed).toEqual([]);
    const purgeScheduled = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'purgeRecords',
    );
    const purgeCompleted = events.find(
      (e) =>
        e.activityTaskCompletedEventAttributes &&
        String(e.activityTaskCompletedEventAttributes.scheduledEventId) === String(purgeScheduled?.eventId),
    );
    expect(purgeCompleted?.activityTaskCompletedEventAttributes?.identity).toMatch(new RegExp(`^${first.pid}@`));
    expect((await current()).state).toBe('running');
  }, 200_000);

  it('is replaced by a new worker on the same queue, which completes the request exactly once', async () => {
    expect(firstExit?.code).toBe(0);
    const { url } = await startWorker();
    final = await until(
      'the request to finish',
      async () => {
        const r = await current();
        return ['completed', 'needs-operator', 'rejected'].includes(r.state) ? r : undefined;
      },
      200_000,
      250,
    );
    expect(final.state, final.operatorNote ?? '').toBe('completed');
    expect(final.progress).toEqual({ purged: 2 * MEMORIES, total: 2 * MEMORIES });
    expect(final.certificateIds).toHaveLength(1);
    expect(await services.certificates.byRequest(tenant, requestId)).toHaveLength(1);

    const counts: Record<string, number> = {};
    for await (const entry of services.audit.entries(tenant)) {
      const ofRequest =
        entry.target === requestId || (entry.details as { requestId?: string } | null)?.requestId === requestId;
      if (ofRequest && entry.action.startsWith('erasure.')) counts[entry.action] = (counts[entry.action] ?? 0) + 1;
    }
    expect(counts).toEqual({ 'erasure.authorised': 1, 'erasure.marked-deleted': 1, 'erasure.certified': 1 });

    // The steps after the purge ran on the new worker, and its listener timed them: each attempt that finished is
    // timed, so a step retried under load (an attempt past its timeout that still finished) counts more than once;
    // the effects above are what must happen once.
    const scraped = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const samples = parseExposition(await scraped.text());
    for (const step of ['expunge', 'verify']) {
      expect(
        valueOf(samples, 'lethe_erasure_step_duration_seconds_count', { step, outcome: 'done' }),
        step,
      ).toBeGreaterThanOrEqual(1);
    }
    expect(valueOf(samples, 'lethe_erasure_step_duration_seconds_count', { step: 'purge' })).toBeUndefined();
  }, 240_000);
});
