/**
 * Reliability: the gap in an erasure's purge between destroying a chunk's data keys and deleting its rows. Once a
 * record's key is gone its row is ciphertext that opens nowhere, so for that moment — and for as long as the row
 * delete is held up by a store that stops answering — every route a principal reads by must answer as if the record
 * were already gone: a 404 by id, nothing from search or retrieval, nothing from the stores read by another process
 * whose key memory is cold. Never an error, never the ciphertext.
 *
 * The purge is held right after its first real shred (a wrapper around the worker's own cipher); the reads are made
 * while it is held; then FerretDB is paused (SIGSTOP) and the purge let go, so that its row delete runs into a
 * server that does not answer, until the workflow's history shows the purge failed or retried (or a bounded time
 * passes). Once FerretDB is back the erasure must complete, leave no row and no key of the closure, and certify the
 * keys it destroyed.
 *
 * It pauses a server of the stack it runs on: it runs with the reliability suite only, whole in both its full and
 * its reduced (`LETHE_RELIABILITY=reduced`) form, as it is a single short scenario.
 */
import { randomUUID } from 'node:crypto';
import { inActivity } from '../support/in-activity.js';
import type { WorkflowHandle } from '@temporalio/client';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../app/services.js';
import type { ContentCipher, ContentRecord } from '../../src/substrate/crypto/content-cipher.js';
import { Collections, mapBounded } from '../../src/substrate/mongo/collections.js';
import { erasureWorkflowId } from '../../src/temporal/erasure-gateway.js';
import { startTestApp, uniqueTenant, type TestApp } from '../support/app.js';
import { testRuntime } from '../support/harness.js';
import { fileErasure, waitForState } from '../support/erasure-fixture.js';
import { ordinalWord } from '../support/samples.js';
import { writeCodewordSubject } from '../support/codeword-subject.js';
import { activityAttempts, type ActivityAttempts } from '../support/activity-attempts.js';
import { serverUnderTest } from '../support/server-faults.js';
import { bounded, diagnose } from '../support/paused-server-reads.js';
import { vaultDocsNaming } from '../support/vault-refs.js';

/** Memories of the subject, each extracted from an event of its own: a closure of twice as many records. */
const MEMORIES = 10;
/** The ciphertext's mark (any version of the seal): no response may carry it. */
const SEALED = 'lethe-sealed:';
const PURGE = 'purgeRecords';
/** From filing the request to its purge's first shred: locate, closure, authorise and tombstone steps. */
const REACH_PURGE_MS = 120_000;
/**
 * How long FerretDB stays paused while the purge has not yet failed: the driver's monitor gives up on a server
 * that does not answer its heartbeat after its connect timeout (30 s) and then interrupts the operations in flight.
 * Kept short so that the file runs in the reduced suite.
 */
const LAND_WITHIN_MS = 60_000;
/** From the end of the pause to completed: the purge's retry backoff, then expunge, compact, verify, certify. */
const SETTLE_MS = 150_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const sorted = (ids: readonly string[]) => [...ids].sort();

/** Where the pause went: into the purge (it failed or retried), past it (it completed untouched), or not yet. */
function landing(attempts: ActivityAttempts): 'landed' | 'missed' | undefined {
  if (attempts.retried > 0 || attempts.failed > 0) return 'landed';
  if (attempts.firstCompletedAttempt === 1) return 'missed';
  return undefined;
}

/** What the held shred destroyed: the ids it was given, and how many keys it removed from the vault. */
interface Shredded {
  ids: string[];
  destroyed: number;
}

/**
 * Holds the purge after its first shred of one request's records, once the keys are really destroyed and before
 * any row is deleted. Every other shred (other tenants', other steps', the purge's retries) passes untouched.
 */
class ShredHold {
  private armed: { tenant: string; closure: Set<string>; reached: (s: Shredded) => void } | undefined;
  private open: (() => void) | undefined;
  private gate: Promise<void> = Promise.resolve();
  private readonly original: ContentCipher['shred'];

  constructor(private readonly cipher: ContentCipher) {
    this.original = cipher.shred;
    cipher.shred = async (tenant, ids, beforeDestroy) => {
      const destroyed = await this.original.call(cipher, tenant, ids, beforeDestroy);
      const armed = this.armed;
      if (armed && tenant === armed.tenant && inActivity(PURGE) && ids.some((id) => armed.closure.has(id))) {
        this.armed = undefined;
        armed.reached({ ids: [...ids], destroyed });
        await this.gate;
      }
      return destroyed;
    };
  }

  /** Resolves once the purge of these records has shredded and is held. */
  arm(tenant: string, closure: readonly string[]): Promise<Shredded> {
    this.release();
    this.gate = new Promise<void>((resolve) => (this.open = resolve));
    return new Promise((reached) => (this.armed = { tenant, closure: new Set(closure), reached }));
  }

  release(): void {
    this.armed = undefined;
    this.open?.();
    this.open = undefined;
  }

  restore(): void {
    this.release();
    this.cipher.shred = this.original;
  }
}

describe('the gap between a data key destroyed and its row deleted, in an erasure purge', () => {
  let app: TestApp;
  let hold: ShredHold;
  const ferretdb = serverUnderTest('ferretdb');
  let open: { handle: WorkflowHandle; completed: boolean } | undefined;

  beforeAll(async () => {
    // The pause goes only into a FerretDB the stack started; one someone else runs cannot be paused here.
    ferretdb.pid();
    expect(await ferretdb.healthy(), 'FerretDB answers before the suite').toBe(true);
    app = await startTestApp();
    hold = new ShredHold(app.services.cipher);
  });

  afterEach(async () => {
    // Whatever happened: the purge let go, FerretDB running and answering, the request not left running.
    hold?.release();
    await ferretdb.heal();
    if (open && !open.completed) await open.handle.terminate('reliability test cleanup').catch(() => undefined);
    open = undefined;
  });

  afterAll(async () => {
    hold?.restore();
    await ferretdb.heal();
    await app?.close();
  });

  it('reads every record as erased while its key is gone and its row is not, through a paused row delete, and certifies the keys it destroyed', async () => {
    const began = Date.now();
    const seconds = (since: number) => Math.round((Date.now() - since) / 100) / 10;
    const tenant = uniqueTenant();
    const canary = `CANARY-${randomUUID()}`;
    const keep = `KEEP-${randomUUID()}`;
    const subject = 'subject-shred-gap';
    const writer = 'shred-gap-writer';
    const agent = await app.token(tenant, ['agent'], writer);
    const db = app.runtime.db;
    const vault = app.services.cipher.vault;

    // The subject's records, and another subject's event and memory that must come through untouched.
    await app.services.index.ensureTenantIndex(tenant);
    const { eventIds, memoryIds, control } = await writeCodewordSubject(app, {
      tenant,
      token: agent,
      subject,
      canary,
      keep,
      count: MEMORIES,
      label: ordinalWord,
    });
    const closure = [...eventIds, ...memoryIds];
    const controlMemory = control.memoryId;
    const controlIds = [control.eventId, controlMemory];

    /** Every response a principal gets from the read routes, to be searched for the canary and the ciphertext. */
    const bodies: string[] = [];
    const call = async (method: 'GET' | 'POST', url: string, payload?: object): Promise<LightMyRequestResponse> => {
      const response = await app.request({
        method,
        url: `/v1/tenants/${tenant}${url}`,
        token: agent,
        ...(payload ? { payload } : {}),
      });
      bodies.push(response.body);
      return response;
    };
    /** Each record of the closure read by id by its owner: the status codes that are not 404. */
    const notErased = async () =>
      (
        await mapBounded(
          [...eventIds.map((id) => `/events/${id}`), ...memoryIds.map((id) => `/memories/${id}`)],
          8,
          async (url) => [url, (await call('GET', url)).statusCode] as const,
        )
      ).filter(([, code]) => code !== 404);
    /** The ids search and retrieval serve for a query (history intent: deleted and superseded records too). */
    const served = async (query: string) => {
      const search = await call('POST', '/search', { query, intent: 'history', k: 100 });
      expect(search.statusCode, search.body).toBe(200);
      const retrieve = await call('POST', '/retrieve', { query, intent: 'history', k: 50 });
      expect(retrieve.statusCode, retrieve.body).toBe(200);
      return [
        ...search.json<{ results: { memory: { id: string } }[] }>().results.map((r) => r.memory.id),
        ...retrieve.json<{ items: { id: string }[] }>().items.map((i) => i.id),
      ];
    };
    /** The closure's records another process reads, its key memory cold; and the other subject's, as a control. */
    const readElsewhere = async () => {
      const other = testRuntime();
      try {
        const services = createServices(other);
        const rows = [
          ...(await db
            .collection<ContentRecord>(Collections.memories)
            .find({ tenant, _id: { $in: memoryIds } })
            .toArray()),
          ...(await db
            .collection<ContentRecord>(Collections.events)
            .find({ tenant, _id: { $in: eventIds } })
            .toArray()),
        ];
        return {
          memories: await services.memories.getMany(tenant, memoryIds),
          events: await services.events.getMany(tenant, eventIds),
          opened: await other.cipher.openAll(rows),
          control: [
            ...(await services.memories.getMany(tenant, [controlMemory])),
            ...(await services.events.getMany(tenant, [controlIds[0]!])),
          ],
        };
      } finally {
        await other.close();
      }
    };

    // Before the erasure every route serves the records with their content: the absences below are the erasure's.
    const memoryRead = await call('GET', `/memories/${memoryIds[0]}`);
    expect(memoryRead.statusCode, memoryRead.body).toBe(200);
    expect(memoryRead.body).toContain(canary);
    expect(await notErased()).toHaveLength(closure.length);
    expect(await served(canary)).toEqual(expect.arrayContaining(memoryIds));
    const before = await readElsewhere();
    expect(before.memories).toHaveLength(MEMORIES);
    expect(before.events).toHaveLength(MEMORIES);
    expect(before.opened.filter((r) => r.content.includes(canary))).toHaveLength(closure.length);
    bodies.length = 0;

    const held = hold.arm(tenant, closure);
    const requestId = await fileErasure(app, tenant, { subjectId: subject });
    const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));
    open = { handle, completed: false };
    const shredded = await bounded(held, REACH_PURGE_MS);
    if (!shredded)
      throw new Error(`the purge did not shred within ${REACH_PURGE_MS / 1000} s:\n${await diagnose(handle)}`);
    const heldAt = Date.now();

    // 1. The keys are gone from the vault itself, exactly the closure's; the rows are all still there, sealed.
    expect(sorted(shredded.ids)).toEqual(sorted(closure));
    expect(shredded.destroyed).toBe(closure.length);
    expect(await vault.idsWithKeys(tenant, closure)).toEqual([]);
    expect(sorted(await vault.idsWithKeys(tenant, controlIds))).toEqual(sorted(controlIds));
    const rowsLeft = async () => ({
      memories: await db
        .collection<ContentRecord>(Collections.memories)
        .countDocuments({ tenant, _id: { $in: memoryIds } }),
      events: await db.collection<ContentRecord>(Collections.events).countDocuments({ tenant, _id: { $in: eventIds } }),
    });
    expect(await rowsLeft()).toEqual({ memories: MEMORIES, events: MEMORIES });
    const raw = await db
      .collection<ContentRecord>(Collections.memories)
      .find({ tenant, _id: { $in: memoryIds } })
      .toArray();
    expect(raw.filter((r) => !r.content.startsWith(SEALED))).toEqual([]);

    // 2. Every route reads each record as erased: by id, by search and retrieval, and from another process.
    expect(await notErased()).toEqual([]);
    expect((await served(canary)).filter((id) => closure.includes(id))).toEqual([]);
    const during = await readElsewhere();
    expect(during.memories).toEqual([]);
    expect(during.events).toEqual([]);
    expect(during.opened).toEqual([]);
    // The same process reads the other subject: the empty answers are not an outage.
    expect(sorted(during.control.map((r) => r._id))).toEqual(sorted(controlIds));
    expect(during.control.every((r) => r.content.includes(keep))).toBe(true);
    expect(bodies.filter((b) => b.includes(canary) || b.includes(SEALED))).toEqual([]);
    // The reads above were made in the gap: the rows were there before them and are there still.
    expect(await rowsLeft()).toEqual({ memories: MEMORIES, events: MEMORIES });
    console.log(`[shred gap] every read in the gap answered as erased (${seconds(heldAt)} s of reads)`);

    // 3. The row delete runs into a paused FerretDB, which stays paused until the purge fails or retries.
    const faultAt = Date.now();
    let where: 'landed' | 'missed' | undefined;
    try {
      await ferretdb.pause();
      hold.release();
      for (const deadline = Date.now() + LAND_WITHIN_MS; ;) {
        const attempts = await bounded(activityAttempts(handle, PURGE));
        where = attempts && landing(attempts);
        if (where || Date.now() > deadline) break;
        await sleep(250);
      }
    } finally {
      hold.release();
      await ferretdb.heal();
    }
    const paused = await activityAttempts(handle, PURGE);
    console.log(
      `[shred gap] FerretDB paused ${seconds(faultAt)} s: ${where ?? `the purge neither failed nor finished in ${LAND_WITHIN_MS / 1000} s`}` +
        ` (${PURGE}: attempt ${paused.maxAttempt}, ${paused.failures[0] ?? 'no failure'})`,
    );
    // Nothing could have deleted the rows while the server was paused: the purge cannot have finished untouched.
    expect(where, 'the pause made the purge neither fail nor retry: the fault did not land').toBe('landed');

    // The erasure completes once FerretDB is back: never failed, never handed to an operator or a DPO.
    const settled = await waitForState(
      app,
      tenant,
      requestId,
      ['completed', 'needs-operator', 'needs-dpo', 'partial', 'rejected'],
      SETTLE_MS,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}:\n${await diagnose(handle)}`);
    });
    expect(settled.state, `${settled.operatorNote}\n${await diagnose(handle)}`).toBe('completed');
    expect(await handle.result()).toMatchObject({ state: 'completed', certificateIds: [expect.any(String)] });
    open.completed = true;
    const attempts = await activityAttempts(handle, PURGE);
    expect(attempts.completed, `${PURGE} completed`).toBe(1);
    expect(attempts.retried + attempts.failed, 'the purge failed or retried under the pause').toBeGreaterThan(0);

    // No row and no key of the closure is left; the other subject keeps both.
    expect(await rowsLeft()).toEqual({ memories: 0, events: 0 });
    expect(await vault.idsWithKeys(tenant, closure)).toEqual([]);
    expect(await vaultDocsNaming(db, tenant, closure)).toEqual([]);
    expect(sorted(await vault.idsWithKeys(tenant, controlIds))).toEqual(sorted(controlIds));

    // The canary is found nowhere through the API; the other subject is still served by the same routes.
    expect(await notErased()).toEqual([]);
    expect((await served(canary)).filter((id) => closure.includes(id))).toEqual([]);
    expect(await served(keep)).toContain(controlMemory);
    const kept = await call('GET', `/memories/${controlMemory}`);
    expect(kept.statusCode, kept.body).toBe(200);
    expect(bodies.filter((b) => b.includes(canary) || b.includes(SEALED))).toEqual([]);
    const after = await readElsewhere();
    expect([...after.memories, ...after.events, ...after.opened]).toEqual([]);

    // The certificate: the whole closure, and its shredding names as many destroyed keys as the closure has records.
    const certificates = await app.services.certificates.byRequest(tenant, requestId);
    expect(certificates).toHaveLength(1);
    const certificate = certificates[0]!;
    expect(certificate.status).toBe('complete');
    expect(certificate.closure).toMatchObject({ located: closure.length, total: closure.length });
    expect(sorted(certificate.closure.ids)).toEqual(sorted(closure));
    expect(certificate.stores).toContainEqual(
      expect.objectContaining({ store: 'mongodb', collection: Collections.dataKeys, deleted: closure.length }),
    );
    expect(certificate.probes).toContainEqual(
      expect.objectContaining({ kind: 'data-key', target: 'mongodb', checked: closure.length, found: 0 }),
    );
    expect(certificate.probes.filter((p) => p.found !== 0)).toEqual([]);
    const keysClaim = certificate.assurance.find((a) => a.place.endsWith(`:${Collections.dataKeys}`));
    expect(keysClaim?.statement).toContain(`${closure.length} keys looked up afterwards found none`);
    const purgeStep = certificate.steps.filter((s) => s.step === 'purge');
    expect(purgeStep.map((s) => s.counts.keys)).toEqual([closure.length]);
    // The request records the shredding the certificate states: when, under which KEK and epoch.
    const request = await app.services.erasureRequests.get(tenant, requestId);
    expect(request?.shredding).toMatchObject({ kek: expect.any(String), epoch: expect.any(Number) });
    expect(request!.shredding!.at.getTime()).toBeGreaterThanOrEqual(heldAt);
    const wal = certificate.assurance.find((a) => a.place === 'postgresql:wal' || a.place === 'mongodb:oplog+journal');
    expect(wal?.statement).toContain(`destroyed at ${request!.shredding!.at.toISOString()}`);
    console.log(
      `[shred gap] completed ${seconds(began)} s after the records were written; ${PURGE}: ` +
        `${attempts.maxAttempt} attempts, failures ${JSON.stringify(attempts.failures)}`,
    );
  });
});
