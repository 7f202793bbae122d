/**
 * The data keys an erasure's certificate says it destroyed, and whether they are all gone, when its purge dies around
 * a destroy and is retried. A retry finds the keys it destroyed gone, and records written before sealing never had
 * one: each chunk of the purge records how many keys it found before any goes, and a retry counts from that record.
 * A record only the index still names (its row lost) is found by its index document alone: its key goes before that
 * document, so that a retry still finds it. Real stack; the purge's death is an error thrown by a wrapper around the
 * worker's own cipher, before or after the real destroy.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { activityAttempts } from '../../support/activity-attempts.js';
import { inActivity } from '../../support/in-activity.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { ContentCipher, ContentRecord } from '../../../src/substrate/crypto/content-cipher.js';

describe('a purge that dies around its destroy of data keys, and is retried', () => {
  let app: TestApp;
  let cipher: ContentCipher;
  let shred: ContentCipher['shred'];

  beforeAll(async () => {
    app = await startTestApp();
    cipher = app.services.cipher;
    shred = cipher.shred;
  });
  afterAll(async () => {
    if (cipher) cipher.shred = shred;
    await app?.close();
  });

  it('certifies each key that existed once, and none for the records written before sealing, after dying right after the destroy', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `CANARY-${randomUUID()}`);
    // An event and a memory of the subject as rows written before sealing are: content in clear, no key.
    const [event, memory] = [graph.events[0]!, graph.memories[0]!];
    const [eventRow] = await app.services.events.getMany(tenant, [event]);
    const [memoryRow] = await app.services.memories.getMany(tenant, [memory]);
    await app.runtime.db
      .collection<ContentRecord>(Collections.events)
      .updateOne({ _id: event, tenant }, { $set: { content: eventRow!.content } });
    await app.runtime.db
      .collection<ContentRecord>(Collections.memories)
      .updateOne({ _id: memory, tenant }, { $set: { content: memoryRow!.content } });
    expect(await shred.call(cipher, tenant, [event, memory])).toBe(2);
    expect(await app.runtime.cipher.vault.idsWithKeys(tenant, [event, memory])).toEqual([]);
    expect((await app.services.memories.getMany(tenant, [memory]))[0]?.content).toBe(memoryRow!.content);

    // The purge's first destroy of this tenant's records goes through, then its attempt dies before any row goes.
    let died = 0;
    cipher.shred = async (of, ids, beforeDestroy) => {
      const destroyed = await shred.call(cipher, of, ids, beforeDestroy);
      if (died === 0 && of === tenant && inActivity('purgeRecords')) {
        died += 1;
        throw new Error('the worker was lost right after the keys were destroyed');
      }
      return destroyed;
    };
    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    const settled = await completeErasure(app, tenant, requestId, 'extend');
    expect(settled.state, settled.operatorNote ?? '').toBe('completed');
    expect(died).toBe(1);
    const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));
    expect((await activityAttempts(handle, 'purgeRecords')).retried).toBeGreaterThan(0);

    const certificates = await app.services.certificates.byRequest(tenant, requestId);
    expect(certificates).toHaveLength(1);
    const certificate = certificates[0]!;
    const closure = certificate.closure.ids;
    expect(closure).toEqual(expect.arrayContaining([...graph.events, ...graph.memories]));
    expect(await app.runtime.cipher.vault.idsWithKeys(tenant, closure)).toEqual([]);
    // Every record of the closure but the two had a key, destroyed by the attempt that died; the retry found none.
    expect(certificate.stores).toContainEqual(
      expect.objectContaining({ store: 'mongodb', collection: Collections.dataKeys, deleted: closure.length - 2 }),
    );
    // The two rows written before sealing are not promised to lapse with a KEK epoch: their copies are in clear.
    const unsealed = certificate.assurance.filter((a) => a.place.endsWith(':unsealed'));
    expect(unsealed.map((a) => [a.place, a.level])).toEqual([
      ['postgresql:wal:unsealed', 'L3'],
      ['backups:unsealed', 'L3'],
    ]);
    expect(unsealed[0]!.statement).toContain(`2 of the ${closure.length} erased records were written before sealing`);
  }, 240_000);

  /** A subject's records, and a memory about the subject that only the index still names: its row was lost. */
  const withOrphan = async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `CANARY-${randomUUID()}`);
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], graph.writer),
      payload: {
        events: [sampleEvent({ subjects: [graph.other], content: 'Ben called about the Porto office.' })],
        memories: [
          sampleMemory({
            subjects: [graph.subject],
            attribute: 'office',
            content: 'Ana visits the Porto office on Fridays.',
            provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-fact' },
          }),
        ],
      },
    });
    expect(written.statusCode, written.body).toBe(201);
    const orphan = written.json<{ memories: { id: string }[] }>().memories[0]!.id;
    await app.runtime.db.collection<ContentRecord>(Collections.memories).deleteOne({ _id: orphan, tenant });
    expect((await app.services.index.probe(tenant, { ids: [orphan] })).byId).toEqual([orphan]);
    expect(await app.runtime.cipher.vault.idsWithKeys(tenant, [orphan])).toEqual([orphan]);
    return { tenant, graph, orphan };
  };

  it.each(['before', 'after'] as const)(
    'destroys and certifies the key of a record only the index named, when the purge dies %s destroying it',
    async (when) => {
      const { tenant, graph, orphan } = await withOrphan();
      let died = 0;
      cipher.shred = async (of, ids, beforeDestroy) => {
        const aimed = died === 0 && of === tenant && ids.includes(orphan) && inActivity('purgeRecords');
        if (aimed && when === 'before') {
          died += 1;
          throw new Error('the worker was lost before the orphan’s key was destroyed');
        }
        const destroyed = await shred.call(cipher, of, ids, beforeDestroy);
        if (aimed) {
          died += 1;
          throw new Error('the worker was lost right after the orphan’s key was destroyed');
        }
        return destroyed;
      };
      const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
      const settled = await completeErasure(app, tenant, requestId, 'extend');
      cipher.shred = shred;
      expect(settled.state, settled.operatorNote ?? '').toBe('completed');
      expect(died).toBe(1);
      const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));
      expect((await activityAttempts(handle, 'purgeRecords')).retried).toBeGreaterThan(0);

      // Its key and its index document are gone, whichever side of the destroy the attempt died on.
      expect(await app.runtime.cipher.vault.idsWithKeys(tenant, [orphan])).toEqual([]);
      expect((await app.services.index.probe(tenant, { ids: [orphan] })).byId).toEqual([]);
      const [certificate] = await app.services.certificates.byRequest(tenant, requestId);
      // The certificate names it among what was erased, and counts its key with the others, each once.
      const closure = certificate!.closure.ids;
      expect(closure).toContain(orphan);
      expect(await app.runtime.cipher.vault.idsWithKeys(tenant, closure)).toEqual([]);
      expect(certificate!.stores).toContainEqual(
        expect.objectContaining({ store: 'mongodb', collection: Collections.dataKeys, deleted: closure.length }),
      );
    },
    240_000,
  );
});
