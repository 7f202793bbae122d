/**
 * No write outlives the fence of an erasure. An admission slowed on purpose (the derivation verifier held until
 * the test releases it) checks the fences before the erasure raises them, and writes only after the erasure has
 * certified: it must not restore the erased event (same id) nor admit a memory citing it. And a retried admission
 * refused by a fence takes back the events an earlier attempt of the same stage wrote, not only its memories.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { uniqueId } from '../../support/harness.js';
import { startChatCompletionsStub, type ChatCompletionsStub } from '../../support/chat-completions-stub.js';
import { admitBatch, type AdmissionDeps, type StagedBatch } from '../../../src/ingestion/admit-batch.js';
import { EventInputSchema, MemoryInputSchema } from '../../../src/ingestion/write-schemas.js';
import type { MemoryStore } from '../../../src/substrate/memories/memory-store.js';
import type { EventStore } from '../../../src/substrate/events/event-store.js';
import type { EventRecord, MemoryRecord } from '../../../src/substrate/model/records.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { isSealed } from '../../../src/substrate/crypto/content-seal.js';
import type { DerivationVerifier } from '../../../src/governance/derivation/verifier.port.js';
import type { CertificateBody } from '../../../src/governance/certificates/certificate.js';
import { createMongoAdmissionLeaseStore } from '../../../src/governance/erasure/admission-lease-store.js';
import { createMongoErasureFenceStore } from '../../../src/governance/erasure/erasure-fence-store.js';

/** Waits on a condition (no time is asserted: the bound only keeps a broken run from hanging). */
async function until(what: () => Promise<boolean>, label: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error(`still waiting: ${label}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('an admission that checked before an erasure and writes after it certified', () => {
  let app: TestApp;
  let stub: ChatCompletionsStub;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    // The verifier answers only once released, then with an error: the audit is unresolved and the memory would be
    // written for sign-off (a write, whatever its status).
    stub = await startChatCompletionsStub(async () => {
      await released;
      return { status: 500 };
    });
    app = await startTestApp({
      config: {
        LETHE_DERIVATION_AUDIT: 'enforce',
        LETHE_VERIFIER: 'openai-compatible',
        LETHE_VERIFIER_URL: stub.url,
        LETHE_VERIFIER_TIMEOUT_MS: '300000',
      },
    });
  });
  afterAll(async () => {
    release();
    await app?.close();
    await stub?.close();
  });

  it('neither restores the erased event nor admits a memory citing it, and the erasure completes', async () => {
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const canary = `CANARY-${randomUUID()}`;
    const writer = await app.token(tenant, ['agent'], 'agent-slow');
    const event = sampleEvent({ subjects: [subject], content: `Ana's codeword is ${canary}.` });
    // The event exists before the erasure (no memory: nothing for the held verifier to audit).
    const base = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: writer,
      payload: { events: [event] },
    });
    expect(base.statusCode, base.body).toBe(201);
    const eventId = base.json<{ events: { id: string }[] }>().events[0]!.id;

    // The same event again (same id) and a memory citing it: checked now, held in the verifier.
    const slow = app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: writer,
      payload: {
        events: [event],
        memories: [
          sampleMemory({
            subjects: [subject],
            content: `The codeword is ${canary}.`,
            provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-fact' },
          }),
        ],
      },
    });
    await until(async () => stub.requests.length > 0, 'the admission reaches the verifier');

    const requestId = await fileErasure(app, tenant, { subjectId: subject });
    // Today the erasure completes while the admission is held; an erasure that waits for admissions older than its
    // fence says so on their leases. Either way the whole erasure has run (certified) before the release.
    const leases = app.runtime.db.collection('admission_leases');
    await until(async () => {
      const request = await app.services.erasureRequests.get(tenant, requestId);
      if (request?.state === 'completed') return true;
      const awaited = (await leases.countDocuments({ tenant, awaitedBy: requestId })) > 0;
      return awaited && (request?.certificateIds.length ?? 0) > 0;
    }, 'the erasure completes or waits for the admission');
    const certified = await app.services.erasureRequests.get(tenant, requestId);
    const certificate: CertificateBody = (await app.services.certificates.get(
      tenant,
      certified!.certificateIds.at(-1)!,
    ))!;
    expect(certificate.closure.ids).toContain(eventId);

    release();
    const written = await slow;
    const done = await waitForState(app, tenant, requestId, ['completed', 'needs-operator']);
    expect(done.state).toBe('completed');

    // The erased event is not back, and nothing about the subject or citing the event was admitted.
    expect((await app.services.events.get(tenant, eventId))?._id, 'the erased event is back').toBeUndefined();
    expect(await app.services.events.idsBySubject(tenant, subject, { includeDeleted: true })).toEqual([]);
    expect(await app.services.memories.idsBySubject(tenant, subject), 'memories citing it').toEqual([]);
    expect(await app.services.lineage.childrenOf(tenant, eventId)).toEqual([]);
    // The batch was refused; the agent is told neither the request nor the content (the DPO reads the reason in
    // the audit's write.refused).
    expect(written.statusCode, written.body).toBe(409);
    expect(written.body).toMatch(/not admitted now/);
    expect(written.body).not.toContain(requestId);
    expect(written.body).not.toContain(canary);
  }, 240_000);
});

describe('a refused admission takes back what any attempt of its stage wrote', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  /** A batch of one event about the subject and one memory citing it, as the API stages it. */
  function stagedAbout(subject: string): StagedBatch {
    return {
      roles: ['agent'],
      events: [EventInputSchema.parse(sampleEvent({ subjects: [subject], content: 'Noted: prefers e-mail.' }))],
      memories: [
        {
          ...MemoryInputSchema.parse(
            sampleMemory({
              subjects: [subject],
              provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-fact' },
            }),
          ),
          id: `mem_${randomUUID()}`,
        },
      ],
    };
  }

  /** The first attempt dies after its events are written (the memory insert fails), as a worker crash would. */
  async function attemptThatDies(deps: AdmissionDeps, tenant: string, stageId: string, batch: StagedBatch) {
    const failing: MemoryStore = { ...deps.memories, insertMany: () => Promise.reject(new Error('connection reset')) };
    await expect(admitBatch({ ...deps, memories: failing }, tenant, 'agent-1', stageId, batch)).rejects.toThrow(
      'connection reset',
    );
  }

  it('takes back the events an earlier attempt of the stage wrote, as well as its memories', async () => {
    const { derivation: _audit, ...deps } = app.services;
    const s = app.services;
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const stageId = `stg_${randomUUID()}`;
    const batch = stagedAbout(subject);
    const memoryId = batch.memories[0]!.id;
    await attemptThatDies(deps, tenant, stageId, batch);
    const eventIds = await s.events.idsBySubject(tenant, subject);
    expect(eventIds).toHaveLength(1);

    // An erasure of the subject raises its fence before the retry.
    const requestId = `era_${randomUUID()}`;
    await s.fences.raise(tenant, requestId, [{ kind: 'subject', value: subject }]);
    try {
      const retried = await admitBatch(deps, tenant, 'agent-1', stageId, batch);
      expect(retried.refused).toMatchObject({ type: 'Conflict', field: 'events.0.subjects.0' });
      expect(retried.refused?.message).toContain(requestId);
      expect(await s.events.getMany(tenant, eventIds)).toEqual([]);
      expect(await s.memories.getMany(tenant, [memoryId])).toEqual([]);
      expect(await s.lineage.childrenOf(tenant, eventIds[0]!)).toEqual([]);
    } finally {
      await s.fences.lower(tenant, requestId);
    }
  }, 60_000);

  it('an attempt that died holding its lease is revoked by the next lowering, and its retry takes back its writes', async () => {
    const { derivation: _audit, ...services } = app.services;
    const s = app.services;
    // A short lease, so that the dead attempt's lease expires while the lowering waits for it.
    const leases = createMongoAdmissionLeaseStore(app.runtime.db, s.fingerprints, {
      leaseMs: 300,
      maxWaitMs: 60_000,
      pollMs: 50,
    });
    const deps = { ...services, fences: createMongoErasureFenceStore(app.runtime.db, s.fingerprints, leases) };
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const stageId = `stg_${randomUUID()}`;
    const batch = stagedAbout(subject);
    await attemptThatDies(deps, tenant, stageId, batch);
    const eventIds = await s.events.idsBySubject(tenant, subject);
    expect(eventIds).toHaveLength(1);
    expect(await leases.standing(tenant, stageId)).toEqual({ state: 'open' });

    // An erasure's whole life passes before the retry: fence up, then down once the dead lease has expired.
    const requestId = `era_${randomUUID()}`;
    await deps.fences.raise(tenant, requestId, [{ kind: 'subject', value: subject }]);
    await deps.fences.lower(tenant, requestId);
    expect(await leases.standing(tenant, stageId)).toEqual({ state: 'revoked', requestId });

    const retried = await admitBatch(deps, tenant, 'agent-1', stageId, batch);
    expect(retried.refused).toMatchObject({ type: 'Conflict', field: 'batch' });
    expect(retried.refused?.message).toContain(requestId);
    expect(await s.events.getMany(tenant, eventIds)).toEqual([]);
    expect(await s.memories.getMany(tenant, [batch.memories[0]!.id])).toEqual([]);
    // The refused retry closed the lease: later erasures do not wait for it.
    expect(await leases.standing(tenant, stageId)).toEqual({ state: 'missing' });
  }, 60_000);

  it('an admission still running when the lowering stops waiting is revoked, and its check after writing takes its writes back, shredded', async () => {
    const s = app.services;
    // A lowering that waits only briefly for a lease that stays renewed.
    const leases = createMongoAdmissionLeaseStore(app.runtime.db, s.fingerprints, {
      leaseMs: 60_000,
      maxWaitMs: 200,
      pollMs: 50,
    });
    const fences = createMongoErasureFenceStore(app.runtime.db, s.fingerprints, leases);
    let entered: () => void = () => undefined;
    const inVerifier = new Promise<void>((resolve) => (entered = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Held until released, then unavailable: the audit is unresolved and the memory would be written for sign-off.
    const held: DerivationVerifier = {
      id: 'held',
      version: '1',
      async verify() {
        entered();
        await released;
        throw new Error('verifier unavailable');
      },
    };
    // A backup taken at the last moment before the take-back: the batch's rows as stored, sealed.
    const backup: { memories: MemoryRecord[]; events: EventRecord[] } = { memories: [], events: [] };
    const rowsOf = async <T>(name: string, ids: readonly string[]) =>
      app.runtime.db
        .collection<T & { _id: string }>(name)
        .find({ _id: { $in: [...ids] } } as never)
        .toArray() as Promise<T[]>;
    const memories: MemoryStore = {
      ...s.memories,
      async withdraw(tenant, ids) {
        backup.memories.push(...(await rowsOf<MemoryRecord>(Collections.memories, ids)));
        return s.memories.withdraw(tenant, ids);
      },
    };
    const events: EventStore = {
      ...s.events,
      async withdrawRecordedBy(tenant, stageId, ids) {
        backup.events.push(...(await rowsOf<EventRecord>(Collections.events, ids)));
        return s.events.withdrawRecordedBy(tenant, stageId, ids);
      },
    };
    const deps: AdmissionDeps = {
      ...s,
      memories,
      events,
      fences,
      derivation: { ...s.derivation, mode: 'enforce', verifier: held, timeoutMs: 120_000 },
    };
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const stageId = `stg_${randomUUID()}`;
    const batch = stagedAbout(subject);
    const admission = admitBatch(deps, tenant, 'agent-1', stageId, batch);
    await inVerifier;

    const requestId = `era_${randomUUID()}`;
    await fences.raise(tenant, requestId, [{ kind: 'subject', value: subject }]);
    await fences.lower(tenant, requestId);
    expect(await leases.standing(tenant, stageId)).toEqual({ state: 'revoked', requestId });

    release();
    const result = await admission;
    expect(result.refused).toMatchObject({ type: 'Conflict', field: 'batch' });
    expect(result.refused?.message).toContain(requestId);
    expect(await s.events.idsBySubject(tenant, subject, { includeDeleted: true })).toEqual([]);
    expect(await s.memories.getMany(tenant, [batch.memories[0]!.id])).toEqual([]);
    // Restored with the live vault, the backup opens nothing of the batch: its data keys went with it.
    expect(backup.memories.map((m) => m._id)).toEqual([batch.memories[0]!.id]);
    expect(backup.events).toHaveLength(1);
    expect(backup.memories.every((m) => isSealed(m.content)) && backup.events.every((e) => isSealed(e.content))).toBe(
      true,
    );
    expect(await app.runtime.cipher.openAll([...backup.memories, ...backup.events])).toEqual([]);
    const ids = [...backup.memories, ...backup.events].map((r) => r._id);
    expect(await app.runtime.cipher.vault.idsWithKeys(tenant, ids)).toEqual([]);
  }, 60_000);
});
