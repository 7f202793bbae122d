/**
 * The index may lag the store: a change reaches MongoDB first and the index document later (or never, if the
 * process dies between the two writes). Retrieval must never serve a record on the strength of a stale index field.
 * Each case changes one thing the judge reads — scope, status, a legal hold, valid time — in the store alone, leaving
 * the index document as it was, and retrieves at once: the record is gone from the answer, counted as refused.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory, statedBatch } from '../../support/samples.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

interface Answer {
  items: { id: string }[];
  counts: { refused: number; unresolved: number };
}

describe('retrieval over an index that lags the store', () => {
  let app: TestApp;
  let tenant: string;
  const canary = `ledger${randomUUID().slice(0, 8)}`;
  const ids: string[] = [];

  const retrieve = async () => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrieve`,
      token: await app.token(tenant, ['agent'], 'agent-a'),
      payload: { query: `${canary} invoice ledger`, k: 10 },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Answer>();
  };
  /** Changes the stored row only: the index keeps what it was told at admission. */
  const changeRowOnly = (id: string, set: Record<string, unknown>) =>
    app.runtime.db
      .collection<{ _id: string }>(Collections.memories)
      .updateOne({ _id: id, tenant } as never, { $set: set });

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], 'agent-a'),
      payload: statedBatch(
        Array.from({ length: 5 }, (_, i) =>
          sampleMemory({
            subjects: ['customer-ana'],
            attribute: `ledger-${i}`,
            kind: 'fact',
            content: `The ${canary} invoice ledger entry ${'abcde'[i]} is settled.`,
          }),
        ),
        [sampleEvent({ subjects: ['customer-ana'], content: `Ana's ${canary} ledger.` })],
      ),
    });
    expect(response.statusCode, response.body).toBe(201);
    ids.push(...response.json<{ memories: { id: string }[] }>().memories.map((m) => m.id));
    expect((await retrieve()).items.map((i) => i.id).sort()).toEqual([...ids].sort());
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  it('does not serve a record whose scope moved to another principal', async () => {
    await changeRowOnly(ids[0]!, { scope: 'principal:agent-b' });
    const answer = await retrieve();
    expect(answer.items.map((i) => i.id)).not.toContain(ids[0]);
    expect(answer.counts.refused).toBeGreaterThanOrEqual(1);
  });

  it('does not serve a record whose status left the intent', async () => {
    await changeRowOnly(ids[1]!, { status: 'superseded' });
    expect((await retrieve()).items.map((i) => i.id)).not.toContain(ids[1]);
  });

  it('does not serve a record put under a legal hold', async () => {
    await app.services.memories.restrict(tenant, [ids[2]!], `hold_${randomUUID()}`);
    expect((await retrieve()).items.map((i) => i.id)).not.toContain(ids[2]);
  });

  it('does not serve a record whose valid time ended', async () => {
    await changeRowOnly(ids[3]!, { validTo: new Date(Date.now() - 60_000) });
    const answer = await retrieve();
    expect(answer.items.map((i) => i.id)).not.toContain(ids[3]);
    // The one record left untouched is still served: the refusals are the changes', not the query's.
    expect(answer.items.map((i) => i.id)).toEqual([ids[4]]);
  });
});
