/**
 * Durability: the worker is a process of its own, SIGKILLed in the middle of the purge of a large subject,
 * then replaced by a new one. The purge resumes from its heartbeated cursor — proved by tripwires: while no worker
 * runs, one lineage edge is added out of every record of the erase set; the purge removes the edges out of each
 * record it purges, so the edges left standing name exactly the records the new attempt never touched — and the
 * request finishes exactly once: one certificate, no duplicate audit entries, nothing of the subject left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { defaultPayloadConverter } from '@temporalio/common';
import { createServices, type Services } from '../../../app/services.js';
import type { Runtime } from '../../../app/runtime.js';
import { buildApiServer } from '../../../app/api/server.js';
import { mintToken } from '../../../src/governance/auth/tokens.js';
import type { ErasureRequest } from '../../../src/governance/erasure/erasure-request.js';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import { TEST_INDEX_SETTINGS, uniqueTenant } from '../../support/app.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { lineageEdgeDoc, type LineageEdgeDoc } from '../../../src/substrate/lineage/lineage-store.js';
import { Collections, mapBounded } from '../../../src/substrate/mongo/collections.js';
import { startWorkerProcess, tail, type WorkerProcess } from '../../support/worker-process.js';

/**
 * Memories of the subject, each extracted verbatim from an event of its own: the closure is twice this, purged in
 * chunks of 500 (events first, then memories), each taking seconds on the local stack: the kill lands in the second.
 */
const MEMORIES = 500;
const BATCH = 500;
const SUBJECT = 'subject-bulk';

/** What the purge heartbeats: where a retry starts, and what it had removed up to there. */
interface PurgeHeartbeat {
  next: number;
  totals: { memories: number; events: number; lineage: number; indexDocs: number };
}

const isEvent = (id: string) => id.startsWith('evt_');

describe('a worker SIGKILLed in the middle of the purge', () => {
  const tenant = uniqueTenant();
  const taskQueue = uniqueId('tq');
  const workers: WorkerProcess[] = [];
  let runtime: Runtime;
  let services: Services;
  let api: FastifyInstance;
  let eventIds: string[] = [];
  let memoryIds: string[] = [];
  let requestId: string;
  /** The heartbeat the server held for the purge when the worker died: the cursor the next attempt starts at. */
  let atKill: PurgeHeartbeat;
  /** The erase set, in the order the purge walks it, split at that cursor. */
  let purgedBeforeKill: string[] = [];
  let leftAtKill: string[] = [];
  /** Lineage edges touching a record after the cursor, still there when the worker died: the next attempt's to remove. */
  let edgesLeftAtKill = 0;
  let final: ErasureRequest;

  const token = (roles: ('agent' | 'dpo')[], principal = uniqueId('p')) =>
    mintToken(runtime.config.tokens.hs256Secret!, { id: principal, tenant, roles }, 600);
  const request = async (method: 'GET' | 'POST', url: string, roles: ('agent' | 'dpo')[], payload?: object) =>
    api.inject({
      method,
      url,
      headers: { authorization: `Bearer ${await token(roles)}` },
      ...(payload ? { payload } : {}),
    });

  async function until<T>(
    what: string,
    probe: () => Promise<T | undefined>,
    timeoutMs: number,
    everyMs = 100,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  const current = async () => (await services.erasureRequests.get(tenant, requestId))!;
  const lineage = () => runtime.db.collection<LineageEdgeDoc>(Collections.lineage);
  const tripwire = (id: string) => lineageEdgeDoc(tenant, id, `mem_tripwire-${id}`);
  /** How many of `ids` (events and memories) are still in MongoDB. */
  const stillStored = async (ids: readonly string[]) =>
    (await services.events.getMany(tenant, ids.filter(isEvent))).length +
    (
      await services.memories.getMany(
        tenant,
        ids.filter((id) => !isEvent(id)),
      )
    ).length;

  beforeAll(async () => {
    runtime = testRuntime();
    // The API's services start workflows on the task queue the worker processes poll; no worker in this process.
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
    workers.push(startWorkerProcess({ taskQueue }));

    for (let at = 0; at < MEMORIES; at += BATCH) {
      const n = Math.min(BATCH, MEMORIES - at);
      const events = Array.from({ length: n }, (_, i) =>
        sampleEvent({ subjects: [SUBJECT], content: `The customer called about order ${at + i}.` }),
      );
      const memories = Array.from({ length: n }, (_, i) =>
        sampleMemory({
          subjects: [SUBJECT],
          kind: 'fact',
          attribute: `order-${at + i}`,
          content: `The customer called about order ${at + i}.`,
          provenance: { eventIds: [`#${i}`], parentIds: [], derivationRule: 'extract-fact' },
        }),
      );
      const written = await request('POST', `/v1/tenants/${tenant}/batches`, ['agent'], { events, memories });
      expect(written.statusCode, written.body).toBe(201);
      const body = written.json<{ events: { id: string }[]; memories: { id: string }[] }>();
      eventIds.push(...body.events.map((e) => e.id));
      memoryIds.push(...body.memories.map((m) => m.id));
    }
    eventIds = [...new Set(eventIds)];
    memoryIds = [...new Set(memoryIds)];
  }, 170_000);

  afterAll(async () => {
    // A request left unfinished by a failure must not run on in Temporal against a queue nobody polls.
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

  it('resumes the purge in a new worker after SIGKILL and completes the request', async () => {
    expect(eventIds).toHaveLength(MEMORIES);
    expect(memoryIds).toHaveLength(MEMORIES);
    const filed = await request('POST', `/v1/tenants/${tenant}/erasure-requests`, ['dpo'], {
      selector: { subjectId: SUBJECT },
      legalGround: 'art17-1a',
    });
    expect(filed.statusCode, filed.body).toBe(202);
    requestId = filed.json<{ id: string }>().id;

    // Catch the purge in flight: some records purged, not all.
    const caught = await until(
      'the purge to be under way',
      async () => {
        const r = await current();
        const purge = r.steps.find((s) => s.step === 'purge');
        if (purge?.state === 'done' || ['completed', 'needs-operator', 'rejected'].includes(r.state)) {
          throw new Error(
            `the purge finished before it could be interrupted (state ${r.state}): make the subject bigger`,
          );
        }
        return purge?.state === 'running' && r.progress.purged > 0 && r.progress.purged < r.progress.total
          ? r
          : undefined;
      },
      120_000,
      50,
    );
    expect(caught.progress.total).toBe(2 * MEMORIES);
    // Kill once the server holds a cursor past the first chunk. The first heartbeat goes out at once, and it may be
    // the keep-alive's, still at 0, when the first chunk outlasts it on a loaded machine; later ones reach the server
    // throttled (the worker's 5 s), while the purge runs on.
    const handle = services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));
    const serverHeartbeat = async () => {
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      const details = pending.find((a) => a.activityType?.name === 'purgeRecords')?.heartbeatDetails?.payloads?.[0];
      return details ? defaultPayloadConverter.fromPayload<PurgeHeartbeat>(details) : undefined;
    };
    // Bounded by the test's own timeout, not by a guess at how soon the server shows it.
    await until(
      'a heartbeat of the purge past its first chunk',
      async () => {
        const beat = await serverHeartbeat();
        if (beat && beat.next > 0) return beat;
        const purge = (await current()).steps.find((s) => s.step === 'purge');
        if (purge?.state === 'done') throw new Error('the purge finished before its cursor reached the server');
        return undefined;
      },
      120_000,
      50,
    );
    const first = workers[0]!;
    first.kill('SIGKILL');
    expect(await first.waitExit()).toMatchObject({ signal: 'SIGKILL' });
    const progress = (await current()).progress;
    expect(progress.purged, 'the purge was still running when the worker died').toBeLessThan(progress.total);

    // The heartbeat the server keeps for the dead attempt: where the next one starts, and its counts so far.
    const beat = await serverHeartbeat();
    expect(beat, 'the server holds a heartbeat of the dead attempt').toBeDefined();
    atKill = beat!;
    expect(atKill.next).toBeGreaterThan(0);
    expect(atKill.next).toBeLessThan(2 * MEMORIES);
    const eraseSet = (await services.erasureSets.get(tenant, requestId, 'erase')).ids;
    expect([...eraseSet].sort()).toEqual([...eventIds, ...memoryIds].sort());
    purgedBeforeKill = eraseSet.slice(0, atKill.next);
    leftAtKill = eraseSet.slice(atKill.next);
    // Everything before the cursor is gone from MongoDB, with its lineage: the dead attempt's work is durable.
    expect(await stillStored(purgedBeforeKill)).toBe(0);
    const edgesOf = async (ids: readonly string[]) => {
      // Two equality lookups per record (out of it, into it): the local server pushes those down, not an $or.
      const found = await mapBounded(
        ids.flatMap((id) => [
          { tenant, input: id },
          { tenant, child: id },
        ]),
        32,
        (filter) =>
          lineage()
            .find(filter, { projection: { _id: 1 } })
            .toArray(),
      );
      return new Set(found.flat().map((e) => e._id)).size;
    };
    expect(await edgesOf(purgedBeforeKill)).toBe(0);
    edgesLeftAtKill = await edgesOf(leftAtKill);
    const storedAtKill = await stillStored(leftAtKill);
    console.log(
      `SIGKILL at progress ${progress.purged}/${progress.total}; the server's purge cursor: ${atKill.next}; ` +
        `records still in MongoDB: ${storedAtKill}; lineage edges left: ${edgesLeftAtKill}`,
    );

    // The tripwires, laid while no worker runs (the dead one can no longer remove any).
    await lineage().insertMany(eraseSet.map(tripwire));

    // A new worker takes over once the dead attempt's heartbeat times out (30 s after its last heartbeat).
    const second = startWorkerProcess({ taskQueue });
    workers.push(second);
    try {
      final = await until(
        'the request to finish',
        async () => {
          const r = await current();
          return ['completed', 'needs-operator', 'rejected'].includes(r.state) ? r : undefined;
        },
        200_000,
        250,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; second worker log:\n${tail(second.logFile)}`);
    }
    expect(final.state, final.operatorNote ?? '').toBe('completed');

    // The purge ran in two attempts of one activity, the second on the new worker.
    const history = await handle.fetchHistory();
    const purgeScheduled = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'purgeRecords',
    );
    expect(purgeScheduled).toHaveLength(1);
    const scheduledId = purgeScheduled[0]!.eventId;
    const started = (history.events ?? []).find(
      (e) =>
        e.activityTaskStartedEventAttributes &&
        String(e.activityTaskStartedEventAttributes.scheduledEventId) === String(scheduledId),
    );
    expect(started?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThanOrEqual(2);
    expect(started?.activityTaskStartedEventAttributes?.identity).toMatch(new RegExp(`^${second.pid}@`));
  }, 240_000);

  it('resumes at the heartbeated cursor: the new attempt purges only the records from the cursor on', async () => {
    expect(final?.state).toBe('completed');
    const standing = await mapBounded([...purgedBeforeKill, ...leftAtKill], 32, async (id) => ({
      id,
      standing: (await lineage().countDocuments({ _id: tripwire(id)._id })) === 1,
    }));
    const untouched = standing.filter((t) => t.standing).map((t) => t.id);
    const touched = standing.filter((t) => !t.standing).map((t) => t.id);
    // Not one record the dead attempt had purged was purged again, and every record after the cursor was.
    expect(untouched).toEqual(purgedBeforeKill);
    expect(touched).toEqual(leftAtKill);
    expect(touched.length).toBeLessThan(2 * MEMORIES);
    // The tripwires were the test's own: no edge out of an erased record may stay behind.
    await mapBounded(untouched, 32, (id) => lineage().deleteOne({ _id: tripwire(id)._id }));
    expect(await lineage().countDocuments({ tenant })).toBe(0);
  });

  it('ends with the progress at the total and every step done', () => {
    expect(final.progress).toEqual({ purged: 2 * MEMORIES, total: 2 * MEMORIES });
    expect(final.steps.map((s) => s.step)).toEqual([
      'locate',
      'closure',
      'authorise',
      'tombstone',
      'purge',
      'expunge',
      'verify',
    ]);
    expect(final.steps.every((s) => s.state === 'done')).toBe(true);
    expect(final.certificateIds).toHaveLength(1);
  });

  it('leaves no record of the subject in MongoDB or Elasticsearch', async () => {
    expect(await services.memories.getMany(tenant, memoryIds)).toEqual([]);
    expect(await services.events.getMany(tenant, eventIds)).toEqual([]);
    expect(await services.memories.idsBySubject(tenant, SUBJECT)).toEqual([]);
    expect(await services.events.idsBySubject(tenant, SUBJECT)).toEqual([]);
    expect((await services.index.probe(tenant, { ids: memoryIds })).byId).toEqual([]);
    // No lineage edge out of an erased event is left either.
    expect((await services.lineage.closure(tenant, eventIds)).derived).toEqual([]);
  });

  it('issues exactly one certificate, whose closure and per-store counts are the whole subject', async () => {
    const certificates = await services.certificates.byRequest(tenant, requestId);
    expect(certificates).toHaveLength(1);
    const certificate = certificates[0]!;
    expect(certificate.status).toBe('complete');
    expect(certificate.closure).toMatchObject({ located: 2 * MEMORIES, derived: 0, total: 2 * MEMORIES });
    expect(certificate.closure.ids).toHaveLength(2 * MEMORIES);
    expect(new Set(certificate.closure.ids)).toEqual(new Set([...eventIds, ...memoryIds]));
    // What each store reports deleted counts every record once, across both attempts of the purge.
    const deleted = Object.fromEntries(
      certificate.stores.map((s) => [s.store === 'mongodb' ? s.collection : s.store, s.deleted]),
    );
    expect(deleted).toMatchObject({ memories: MEMORIES, events: MEMORIES, elasticsearch: MEMORIES });
    // The new attempt started from the heartbeated counts and added only what it purged from the cursor on.
    expect(deleted['memories']).toBe(atKill.totals.memories + leftAtKill.filter((id) => !isEvent(id)).length);
    expect(deleted['events']).toBe(atKill.totals.events + leftAtKill.filter(isEvent).length);
    // The index documents went at the marking, before the purge began: the purge's heartbeat carries their count
    // from its first chunk on, and the new attempt finds none left to add.
    expect(deleted['elasticsearch']).toBe(atKill.totals.indexDocs);
    // Its lineage count: the edges left at the kill and one tripwire per record after the cursor, none before it.
    expect(deleted['lineage']).toBe(atKill.totals.lineage + edgesLeftAtKill + leftAtKill.length);
  });

  it('writes each audit entry of the request once', async () => {
    const counts: Record<string, number> = {};
    for await (const entry of services.audit.entries(tenant)) {
      const ofRequest =
        entry.target === requestId || (entry.details as { requestId?: string } | null)?.requestId === requestId;
      if (ofRequest && entry.action.startsWith('erasure.')) counts[entry.action] = (counts[entry.action] ?? 0) + 1;
    }
    expect(counts).toEqual({ 'erasure.authorised': 1, 'erasure.marked-deleted': 1, 'erasure.certified': 1 });
  });
});
