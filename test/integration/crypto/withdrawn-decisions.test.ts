/**
 * The take-backs of decisions, end to end through the API and the worker: a rectification whose corrected record,
 * and a dispute whose resolution event, meets an erasure's fence raised while it was being written takes it back
 * shredded. A backup of the row taken right after it was written, restored with the live vault, opens nothing of it.
 * The fence is raised from inside the store's write (the worker's own store object), as an erasure filed at that
 * moment would.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { isSealed } from '../../../src/substrate/crypto/content-seal.js';
import type { ContentRecord } from '../../../src/substrate/crypto/content-cipher.js';

describe('a decision taken back at an erasure’s fence', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const rowOf = async (name: string, id: string) =>
    (await app.runtime.db.collection<ContentRecord>(name).findOne({ _id: id })) ?? undefined;

  it('shreds a rectification’s corrected record: a backup taken after its write opens nothing', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `zw${randomUUID().slice(0, 8)}`);
    const filed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/subject-rights/rectification`,
      token: await app.token(tenant, ['dpo'], 'dora'),
      payload: { requestKey: randomUUID(), memoryId: graph.memories[1]!, content: 'Ana wants invoices by post.' },
    });
    expect(filed.statusCode, filed.body).toBe(202);
    const requestId = filed.json<{ id: string }>().id;
    const correctedId = `mem_${requestId}`;
    const erasureId = `era_${randomUUID()}`;

    const memories = app.services.memories;
    const insert = memories.insert;
    const backup: ContentRecord[] = [];
    memories.insert = async (record) => {
      const outcome = await insert.call(memories, record);
      if (record._id === correctedId) {
        const row = await rowOf(Collections.memories, correctedId);
        if (row) backup.push(row);
        await app.services.fences.raise(tenant, erasureId, [{ kind: 'subject', value: graph.subject }]);
      }
      return outcome;
    };
    try {
      const decided = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/subject-rights/rectification/${requestId}/decision`,
        token: await app.token(tenant, ['reviewer'], 'rita'),
        payload: { decision: 'approve', reason: 'the customer wrote in' },
      });
      expect(decided.statusCode, decided.body).toBe(409);
    } finally {
      memories.insert = insert;
      await app.services.fences.lower(tenant, erasureId);
    }
    expect(backup).toHaveLength(1);
    expect(isSealed(backup[0]!.content)).toBe(true);
    expect(await rowOf(Collections.memories, correctedId)).toBeUndefined();
    expect(await app.runtime.cipher.openAll(backup)).toEqual([]);
    expect(await app.runtime.cipher.vault.idsWithKeys(tenant, [correctedId])).toEqual([]);
  }, 120_000);

  it('shreds a dispute’s resolution event: a backup taken after its write opens nothing', async () => {
    const tenant = uniqueTenant();
    const subject = `zd${randomUUID().slice(0, 8)}`;
    const write = async (writer: string, content: string, validFrom: string) => {
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/batches`,
        token: await app.token(tenant, ['agent'], writer),
        payload: {
          events: [sampleEvent({ content: `Call note: ${content}`, subjects: [subject] })],
          memories: [sampleMemory({ kind: 'fact', attribute: 'employer', content, validFrom, subjects: [subject] })],
        },
      });
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ memories: { id: string; status: string }[] }>().memories[0]!;
    };
    await write('agent-1', 'Works at Acme Corp.', '2024-01-01T00:00:00Z');
    const second = await write('agent-2', 'Works at Globex Ltd.', '2025-06-01T00:00:00Z');
    expect(second.status).toBe('disputed');
    const [dispute] = await app.services.disputes.openFor(tenant, second.id);
    expect(dispute).toBeDefined();
    const erasureId = `era_${randomUUID()}`;

    const events = app.services.events;
    const record = events.record;
    const backup: ContentRecord[] = [];
    events.record = async (input) => {
      const written = await record.call(events, input);
      if (input.tenant === tenant && input.source === 'lethe-review') {
        const row = await rowOf(Collections.events, written.event._id);
        if (row) backup.push(row);
        await app.services.fences.raise(tenant, erasureId, [{ kind: 'subject', value: subject }]);
      }
      return written;
    };
    try {
      const resolved = await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/disputes/${dispute!._id}/resolution`,
        token: await app.token(tenant, ['reviewer'], 'rita'),
        payload: { outcome: 'keep-one', memoryId: second.id, reason: 'the newer statement is right' },
      });
      expect(resolved.statusCode, resolved.body).toBe(409);
    } finally {
      events.record = record;
      await app.services.fences.lower(tenant, erasureId);
    }
    expect(backup).toHaveLength(1);
    expect(isSealed(backup[0]!.content)).toBe(true);
    expect(await rowOf(Collections.events, backup[0]!._id)).toBeUndefined();
    expect(await app.runtime.cipher.openAll(backup)).toEqual([]);
  }, 120_000);
});
