/**
 * Reliability: Elasticsearch or FerretDB fails in the middle of an erasure's purge, expunge or verify step —
 * paused (SIGSTOP, SIGCONT after a while) or stopped and started again (the stack's own start, same port and
 * data). Whatever the fault, the request either completes with a certificate whose probes all found nothing,
 * or waits in needs-operator with the operator e-mailed and the runbook named, and completes on the runbook's
 * retry. It never fails and never runs on forever, and nothing of the subject is readable afterwards.
 *
 * These tests pause the shared local servers: they run alone (`npm run test:reliability`), never in `npm test`.
 * `LETHE_RELIABILITY=reduced` runs one scenario per store and fault kind (4); otherwise all 12 run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { loadStackConfig } from '../../stack/stack-config.js';
import { waitForMessage } from '../../stack/smtp/mailbox.js';
import type { ErasureRequest } from '../../src/governance/erasure/erasure-request.js';
import { erasureWorkflowId } from '../../src/temporal/erasure-gateway.js';
import { mapBounded } from '../../src/substrate/mongo/collections.js';
import { startTestApp, uniqueTenant, type TestApp } from '../support/app.js';
import { fileErasure } from '../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../support/samples.js';
import { processState, storeUnderTest, type FaultyStore, type StoreUnderTest } from '../support/store-faults.js';

const stack = loadStackConfig();
const RUNBOOK = 'runbooks/stuck-erasure.md';

/**
 * Memories of the subject, each extracted from an event of its own: a closure of 2 000 records, purged in four
 * chunks of 500 (events, then memories with their index documents). The purge then outlasts the few seconds a
 * stopped server drains its connections, so that a stop ordered as the purge starts lands in it.
 */
const MEMORIES = 1000;
/** Short enough that the activity retries (long profile: 10 attempts up to 1 min apart) outlast it. */
const PAUSE_MS = 30_000;
/**
 * How long a stopped store stays down before the stack starts it again (plus its start time: ≈ 1 s for FerretDB,
 * 5–10 s for Elasticsearch). Longer than the store-write profile's backoff to the 7th attempt (≈ 32 s) and short
 * of the long profile's (≈ 4 min): either outcome may happen, and both are bounded.
 */
const DOWN_MS = 60_000;
/** From the end of the fault to completed or needs-operator: the long profile's whole retry budget, and more. */
const SETTLE_MS = 8 * 60_000;
/** From the operator's retry to completed. */
const AFTER_RETRY_MS = 5 * 60_000;

type Step = 'purge' | 'expunge' | 'verify';
type Fault = 'pause' | 'restart';

interface Scenario {
  store: FaultyStore;
  fault: Fault;
  step: Step;
  /** Part of the reduced (CI) form: one per store and fault kind, the three steps covered between them. */
  reduced: boolean;
  title: string;
}

const ACTIVITY_OF: Record<Step, string> = { purge: 'purgeRecords', expunge: 'expungeIndex', verify: 'verifyErasure' };
const STORE_NAME: Record<FaultyStore, string> = { elasticsearch: 'Elasticsearch', ferretdb: 'FerretDB' };
const REDUCED = new Set([
  'elasticsearch/pause/purge',
  'elasticsearch/restart/expunge',
  'ferretdb/pause/verify',
  'ferretdb/restart/purge',
]);

function describeFault(fault: Fault): string {
  return fault === 'pause'
    ? `paused (SIGSTOP) for ${PAUSE_MS / 1000} s`
    : `stopped for ${DOWN_MS / 1000} s and started again`;
}

const ALL: Scenario[] = (['elasticsearch', 'ferretdb'] as const).flatMap((store) =>
  (['pause', 'restart'] as const).flatMap((fault) =>
    (['purge', 'expunge', 'verify'] as const).map((step) => ({
      store,
      fault,
      step,
      reduced: REDUCED.has(`${store}/${fault}/${step}`),
      title: `${STORE_NAME[store]} ${describeFault(fault)} mid-${step}`,
    })),
  ),
);
const MODE = process.env.LETHE_RELIABILITY === 'reduced' ? 'reduced' : 'full';
const SCENARIOS = MODE === 'reduced' ? ALL.filter((s) => s.reduced) : ALL;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A store read while a store may be paused: bounded, undefined when it does not answer in time. */
async function bounded<T>(read: Promise<T>, ms = 5000): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([read.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the workflow did, for a failure message: its status, pending activities and the end of its history. */
async function diagnose(handle: WorkflowHandle): Promise<string> {
  try {
    const described = await handle.describe();
    const pending = (described.raw.pendingActivities ?? []).map((a) => ({
      activity: a.activityType?.name,
      state: a.state,
      attempt: a.attempt,
      lastFailure: a.lastFailure?.message,
      lastHeartbeat: a.lastHeartbeatTime?.seconds
        ? new Date(Number(a.lastHeartbeatTime.seconds) * 1000).toISOString()
        : null,
    }));
    const history = await handle.fetchHistory();
    const events = (history.events ?? []).slice(-25).map((e) => {
      const [kind, attributes] = Object.entries(e).find(([key, value]) => key.endsWith('EventAttributes') && value) ?? [
        '?',
        {},
      ];
      const failure = (attributes as { failure?: { message?: string; cause?: { message?: string } } }).failure;
      const activity = (attributes as { activityType?: { name?: string } }).activityType?.name;
      return `${e.eventId} ${kind.replace('EventAttributes', '')}${activity ? ` ${activity}` : ''}${failure ? `: ${failure.message}${failure.cause?.message ? ` ← ${failure.cause.message}` : ''}` : ''}`;
    });
    return `workflow ${described.status.name}; pending activities ${JSON.stringify(pending)}\nlast history events:\n  ${events.join('\n  ')}`;
  } catch (error) {
    return `(could not describe the workflow: ${(error as Error).message})`;
  }
}

/** How often the step's activity was scheduled, and the highest attempt that started, from the history. */
async function attemptsOf(
  handle: WorkflowHandle,
  activity: string,
): Promise<{ scheduled: number; maxAttempt: number; failures: string[] }> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity);
  const ids = new Set(scheduled.map((e) => String(e.eventId)));
  const started = events.filter((e) => ids.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId)));
  const failures = events
    .filter((e) =>
      ids.has(
        String(
          e.activityTaskFailedEventAttributes?.scheduledEventId ??
            e.activityTaskTimedOutEventAttributes?.scheduledEventId,
        ),
      ),
    )
    .map(
      (e) => (e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes)?.failure?.message ?? '?',
    );
  return {
    scheduled: scheduled.length,
    maxAttempt: Math.max(0, ...started.map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0)),
    failures,
  };
}

describe(`erasure under store faults (${MODE}: ${SCENARIOS.length} scenarios)`, () => {
  let app: TestApp;
  const stores = {
    elasticsearch: storeUnderTest('elasticsearch'),
    ferretdb: storeUnderTest('ferretdb'),
  } satisfies Record<FaultyStore, StoreUnderTest>;
  /** The request of the scenario running now, terminated after it unless it completed. */
  let open: { handle: WorkflowHandle; completed: boolean } | undefined;
  const summary: Record<string, unknown>[] = [];

  beforeAll(async () => {
    // Faults go only into servers the stack started; a store someone else runs cannot be paused here.
    for (const store of Object.values(stores)) {
      store.pid();
      expect(await store.healthy(), `${store.name} answers before the suite`).toBe(true);
    }
    app = await startTestApp();
  });

  afterEach(async () => {
    // Whatever happened, the shared servers are left running and answering.
    await Promise.all(Object.values(stores).map((store) => store.heal()));
    if (open && !open.completed) await open.handle.terminate('reliability test cleanup').catch(() => undefined);
    open = undefined;
  });

  afterAll(async () => {
    await Promise.all(Object.values(stores).map((store) => store.heal()));
    await app?.close();
    console.log(`reliability summary (${MODE}):\n${summary.map((s) => JSON.stringify(s)).join('\n')}`);
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario.title}: the request completes, or waits for an operator and completes on the runbook's retry`, async () => {
      const began = Date.now();
      const at = () => Math.round((Date.now() - began) / 100) / 10;
      const store = stores[scenario.store];
      const label = scenario.title;
      const tenant = uniqueTenant();
      const canary = `CANARY-${randomUUID()}`;
      const keep = `KEEP-${randomUUID()}`;
      const subject = 'subject-under-fault';
      const agent = await app.token(tenant, ['agent']);
      const dpo = await app.token(tenant, ['dpo'], 'dpo-1');
      const timeline: Record<string, number | string> = {};

      // A subject of hundreds of records, and one other subject's event and memory that must survive.
      await app.services.index.ensureTenantIndex(tenant);
      const events = Array.from({ length: MEMORIES }, (_, i) =>
        sampleEvent({
          subjects: [subject],
          content: `Order ${i}: the customer gave the codeword ${canary} on the phone.`,
        }),
      );
      const memories = Array.from({ length: MEMORIES }, (_, i) =>
        sampleMemory({
          subjects: [subject],
          kind: 'fact',
          attribute: `order-${i}`,
          content: `Order ${i}: the customer's codeword is ${canary}.`,
          provenance: { eventIds: [`#${i}`], parentIds: [], derivationRule: 'extract-fact' },
        }),
      );
      const written = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: agent,
        payload: { events, memories },
      });
      expect(written.statusCode, written.body).toBe(201);
      const batch = written.json<{ events: { id: string }[]; memories: { id: string }[] }>();
      const eventIds = batch.events.map((e) => e.id);
      const memoryIds = batch.memories.map((m) => m.id);
      expect(new Set([...eventIds, ...memoryIds]).size).toBe(2 * MEMORIES);
      const control = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: agent,
        payload: {
          events: [sampleEvent({ subjects: ['subject-kept'], content: `Ben's reference is ${keep}.` })],
          memories: [sampleMemory({ subjects: ['subject-kept'], content: `Ben's reference is ${keep}.` })],
        },
      });
      expect(control.statusCode, control.body).toBe(201);
      const controlMemory = control.json<{ memories: { id: string }[] }>().memories[0]!.id;
      timeline.written = at();

      const requestId = await fileErasure(app, tenant, { subjectId: subject });
      const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));
      open = { handle, completed: false };
      const current = async () => (await bounded(app.services.erasureRequests.get(tenant, requestId))) ?? undefined;
      timeline.filed = at();

      // Land the fault in the step: poll until the store shows it running.
      let caught: ErasureRequest | undefined;
      for (const deadline = Date.now() + 180_000; !caught;) {
        const r = await current();
        const target = r?.steps.find((s) => s.step === scenario.step);
        if (target?.state === 'running') caught = r;
        else if (r && (['completed', 'needs-operator', 'rejected'].includes(r.state) || r.certificateIds.length > 0)) {
          throw new Error(
            `the ${scenario.step} step finished before the fault could land (state ${r.state}): make the subject bigger`,
          );
        } else if (Date.now() > deadline) {
          throw new Error(
            `the ${scenario.step} step did not start within 180 s (state ${r?.state}):\n${await diagnose(handle)}`,
          );
        } else await sleep(25);
      }
      // Where the erasure is, as the workflow sees it (the store may not answer once the fault is in).
      const workflowStep = async () =>
        (await bounded(handle.query<{ phase: string; step: string }>('erasurePhase')))?.step ?? '?';
      const orderedIn = await workflowStep();
      const faultAt = Date.now();
      timeline.faultAt = at();
      timeline.orderedIn = orderedIn;
      const pid = store.pid();
      try {
        if (scenario.fault === 'pause') {
          store.pause();
          // The kernel stops the process asynchronously: wait until /proc says so.
          for (const until = Date.now() + 5000; processState(pid) !== 'T' && Date.now() < until;) await sleep(20);
          expect(processState(pid), `${store.name} (pid ${pid}) is stopped`).toBe('T');
        } else {
          // The stack's stop is a SIGTERM: the server drains its connections for a few seconds before it exits.
          await store.stop();
          expect(processState(pid), `${store.name} (pid ${pid}) has exited`).toBeUndefined();
          timeline.stopMs = Date.now() - faultAt;
        }
        // Where the store actually went away: after a stop's drain the erasure may have moved on.
        const downIn = await workflowStep();
        timeline.landedIn = downIn;
        console.log(
          `[${label}] fault ordered at ${timeline.faultAt} s in step ${orderedIn}` +
            ` (store: ${scenario.step} running, purge progress ${caught.progress.purged}/${caught.progress.total});` +
            ` store unavailable from ${at()} s, in step ${downIn}` +
            (downIn === scenario.step
              ? ''
              : ` — NOT the intended step: the ${scenario.step} step outran the ${store.name} stop`),
        );
        expect(orderedIn, 'the fault was injected in the intended step').toBe(scenario.step);

        await sleep(scenario.fault === 'pause' ? PAUSE_MS : DOWN_MS);
      } finally {
        const healing = Date.now();
        await store.heal();
        timeline.faultEnd = at();
        timeline.healMs = Date.now() - healing;
      }
      const faultMs = Date.now() - faultAt;

      // Either completed or needs-operator: never failed, never running on.
      const settle = async (
        states: ErasureRequest['state'][],
        timeoutMs: number,
        what: string,
      ): Promise<ErasureRequest> => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const status = (await handle.describe()).status.name;
          if (status !== 'RUNNING' && status !== 'COMPLETED') {
            throw new Error(`[${label}] the erasure workflow ended ${status} ${what}:\n${await diagnose(handle)}`);
          }
          const r = await current();
          if (r && states.includes(r.state)) return r;
          if (r && !['running', 'needs-operator', 'completed'].includes(r.state)) {
            throw new Error(
              `[${label}] the request is ${r.state} ${what} (note: ${r.operatorNote}):\n${await diagnose(handle)}`,
            );
          }
          if (Date.now() > deadline) {
            throw new Error(
              `[${label}] the request is still ${r?.state ?? '(store not answering)'} ${Math.round(timeoutMs / 1000)} s ${what}` +
                ` (note: ${r?.operatorNote}; steps: ${JSON.stringify(r?.steps.map((s) => `${s.step}:${s.state}`))}):\n${await diagnose(handle)}`,
            );
          }
          await sleep(500);
        }
      };
      let settled = await settle(['completed', 'needs-operator'], SETTLE_MS, 'after the fault');
      timeline.settled = at();
      timeline.outcome = settled.state;
      const afterFault = await attemptsOf(handle, ACTIVITY_OF[scenario.step]);

      if (settled.state === 'needs-operator') {
        // The operator was told, by e-mail naming the runbook; the audit says which step and error.
        timeline.operatorNote = settled.operatorNote ?? '';
        expect(settled.operatorNote).toMatch(/^step \w+ failed \(\w+\)$/);
        const mail = await waitForMessage(
          stack.smtp.captureDir,
          (m) => m.subject.includes(requestId) && m.subject.includes('needs an operator'),
          60_000,
        );
        expect(mail.to).toContain(app.runtime.config.smtp.operatorEmail);
        expect(mail.text).toContain(RUNBOOK);
        expect(mail.text).not.toContain(canary);
        expect(fs.existsSync(path.join(stack.repoDir, RUNBOOK))).toBe(true);
        const escalations = [];
        for await (const entry of app.services.audit.entries(tenant)) {
          if (entry.action === 'erasure.needs-operator' && entry.target === requestId) escalations.push(entry);
        }
        expect(escalations.length).toBeGreaterThanOrEqual(1);

        // The runbook: bring the store back (done: every store answers), then retry.
        for (const s of Object.values(stores))
          expect(await s.healthy(), `${s.name} answers before the retry`).toBe(true);
        const retried = await app.request({
          method: 'POST',
          url: `/v1/tenants/${tenant}/erasure-requests/${requestId}/retry`,
          token: dpo,
        });
        expect(retried.statusCode, retried.body).toBe(202);
        timeline.retried = at();
        settled = await settle(['completed'], AFTER_RETRY_MS, "after the operator's retry");
        timeline.completed = at();
      }
      expect(settled.state).toBe('completed');
      open.completed = true;
      expect(await handle.result()).toMatchObject({ state: 'completed', certificateIds: [expect.any(String)] });

      const attempts = await attemptsOf(handle, ACTIVITY_OF[scenario.step]);
      const row = {
        scenario: `${scenario.store}/${scenario.fault}/${scenario.step}`,
        orderedIn: timeline.orderedIn,
        landedIn: timeline.landedIn,
        outcome:
          timeline.outcome === 'needs-operator'
            ? `needs-operator (${timeline.operatorNote}) → retry → completed`
            : 'completed',
        faultSeconds: Math.round(faultMs / 100) / 10,
        healSeconds: Math.round(Number(timeline.healMs) / 100) / 10,
        [`${ACTIVITY_OF[scenario.step]}`]: {
          scheduled: attempts.scheduled,
          maxAttempt: Math.max(attempts.maxAttempt, afterFault.maxAttempt),
          failures: [...new Set(attempts.failures)].slice(0, 3),
        },
        timeline,
        totalSeconds: at(),
      };
      summary.push(row);
      console.log(`[${label}] ${JSON.stringify(row)}`);

      // The certificate: the whole closure, every probe found nothing, no deleted document left in the segments.
      const certificates = await app.services.certificates.byRequest(tenant, requestId);
      expect(certificates).toHaveLength(1);
      const certificate = certificates[0]!;
      expect(certificate.status).toBe('complete');
      expect(certificate.closure).toMatchObject({ located: 2 * MEMORIES, total: 2 * MEMORIES });
      expect(certificate.probes.length).toBeGreaterThan(0);
      expect(certificate.probes.filter((p) => p.found !== 0)).toEqual([]);
      expect(certificate.stores.find((s) => s.store === 'elasticsearch')).toMatchObject({ deletedDocsAfter: 0 });

      // Nothing of the subject readable: by id through the API and in each store, nor by the canary in search.
      const reads = await mapBounded(
        [...eventIds.map((id) => `events/${id}`), ...memoryIds.map((id) => `memories/${id}`)],
        8,
        async (p) =>
          [
            p,
            (await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/${p}`, token: agent })).statusCode,
          ] as const,
      );
      expect(reads.filter(([, code]) => code !== 404)).toEqual([]);
      expect(await app.services.memories.getMany(tenant, memoryIds)).toEqual([]);
      expect(await app.services.events.getMany(tenant, eventIds)).toEqual([]);
      expect((await app.services.index.probe(tenant, { ids: memoryIds, text: canary })).found).toEqual([]);
      const search = async (query: string) => {
        const response = await app.request({
          method: 'POST',
          url: `/v1/tenants/${tenant}/search`,
          token: agent,
          payload: { query, intent: 'history', k: 100 },
        });
        expect(response.statusCode, response.body).toBe(200);
        return response.json<{ results: { memory: { id: string; content: string } }[] }>().results;
      };
      // Hybrid search ranks the nearest vectors whatever the words: what it must not return is the subject.
      const hits = await search(canary);
      const closure = new Set([...eventIds, ...memoryIds]);
      expect(hits.filter((r) => closure.has(r.memory.id) || r.memory.content.includes(canary))).toEqual([]);
      // The same paths still serve the other subject: the 404s and the empty search are not an outage.
      expect((await search(keep)).map((r) => r.memory.id)).toContain(controlMemory);
      expect(
        (await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/memories/${controlMemory}`, token: agent }))
          .statusCode,
      ).toBe(200);
    });
  }
});
