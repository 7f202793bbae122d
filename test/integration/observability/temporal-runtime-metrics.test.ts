/**
 * The worker's Temporal runtime serves its own Prometheus series (`LETHE_WORKER_TEMPORAL_METRICS_PORT`): pollers,
 * task slots, schedule-to-start latencies, per workflow and activity type. A worker in a process of its own answers
 * an access request, and its exposition is then read: the series are there for the work it did, and every label is
 * one of Temporal's fixed dimensions, holding neither the tenant nor the subject.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../../app/services.js';
import type { Runtime } from '../../../app/runtime.js';
import { freePort } from '../../../stack/processes.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { uniqueTenant } from '../../support/app.js';
import { parseExposition, type Sample } from '../../support/prometheus-text.js';
import { startWorkerProcess, tail, type WorkerProcess } from '../../support/worker-process.js';

/** Temporal's metric dimensions: names of things in the deployment, never of a tenant's data. */
const TEMPORAL_LABELS = new Set([
  'namespace',
  'task_queue',
  'workflow_type',
  'activity_type',
  'worker_type',
  'poller_type',
  'service_name',
  'operation',
  'status_code',
  'eager',
  'le',
  'quantile',
]);

describe("the worker's Temporal runtime metrics", () => {
  let runtime: Runtime;
  let services: Services;
  let worker: WorkerProcess;
  let samples: Sample[];
  const taskQueue = uniqueId('tq-metrics');
  const tenant = uniqueTenant();
  const subject = `subject-${randomUUID()}`;

  beforeAll(async () => {
    const port = await freePort();
    worker = startWorkerProcess({ taskQueue, env: { LETHE_WORKER_TEMPORAL_METRICS_PORT: String(port) } });
    runtime = testRuntime();
    services = createServices(runtime, { taskQueue });
    await worker.ready(services.temporalClient);
    await services.events.record({
      tenant,
      namespace: 'support',
      source: 'crm',
      externalId: `ext-${randomUUID()}`,
      content: 'A call note.',
      subjects: [subject],
      sensitivity: 'internal',
      trustTier: 2,
      occurredAt: new Date('2026-11-01T10:00:00Z'),
      recordedBy: 'agent-1',
      scope: 'tenant',
    });
    const dpo = { id: 'dpo-1', tenant, roles: ['dpo' as const] };
    const { request } = await services.workflows.access.file(dpo, {
      selector: { subjectId: subject },
      requestKey: randomUUID(),
    });
    for (;;) {
      const state = (await services.access.get(tenant, request._id))!.state;
      if (state === 'ready') break;
      if (state === 'failed') throw new Error(`access ${request._id} failed; worker log:\n${tail(worker.logFile)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The runtime exports on an interval: read until the access request's workflow type shows.
    for (;;) {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null);
      if (response?.ok) {
        samples = parseExposition(await response.text());
        if (samples.some((s) => s.labels['workflow_type'] === 'accessRequest')) break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 180_000);
  afterAll(async () => {
    worker?.kill('SIGTERM');
    await worker?.waitExit();
    await runtime?.close();
  });

  it("serves the runtime's series for the work this worker did, on its task queue", () => {
    const names = new Set(samples.map((s) => s.name));
    expect([...names].filter((n) => n.startsWith('temporal_')).length).toBeGreaterThan(5);
    expect(samples.some((s) => s.labels['task_queue'] === taskQueue)).toBe(true);
    expect(samples.some((s) => s.labels['activity_type'] === 'buildAccessPackage')).toBe(true);
  });

  it("labels by Temporal's fixed dimensions only, never the tenant or the subject", () => {
    const labelNames = new Set(samples.flatMap((s) => Object.keys(s.labels)));
    expect([...labelNames].filter((l) => !TEMPORAL_LABELS.has(l))).toEqual([]);
    const values = samples.flatMap((s) => Object.values(s.labels)).join('\n');
    expect(values).not.toContain(tenant);
    expect(values).not.toContain(subject);
  });
});
