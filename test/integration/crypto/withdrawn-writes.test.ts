/**
 * A write taken back because it met an erasure's fence is shredded, not only deleted: every take-back (an admission's,
 * a rectification's corrected records, a dispute's resolution event) goes through the stores' `withdraw`. A backup
 * of the rows taken before the take-back, restored with the live vault, opens nothing of them. Real database and KMS.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { EventRecord, MemoryRecord } from '../../../src/substrate/model/records.js';
import { isSealed } from '../../../src/substrate/crypto/content-seal.js';
import { memoryRecord } from '../../support/samples.js';

describe('a withdrawn write', () => {
  let app: TestApp;
  let tenant: string;
  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
  });
  afterAll(async () => {
    await app?.close();
  });

  const backupOf = async <T>(name: string, ids: readonly string[]) =>
    (await app.runtime.db
      .collection<{ _id: string }>(name)
      .find({ _id: { $in: [...ids] } })
      .toArray()) as T[];
  const recordEvent = async (stageId: string, content: string) =>
    (
      await app.services.events.record({
        tenant,
        namespace: 'crm',
        source: 'test',
        externalId: randomUUID(),
        content,
        subjects: ['subj-1'],
        sensitivity: 'internal',
        trustTier: 2,
        occurredAt: new Date(),
        recordedBy: 'agent-1',
        scope: 'tenant',
        stageId,
      })
    ).event;

  it('destroys a memory’s data key with its row: a backup of the row opens nothing', async () => {
    const record = memoryRecord(tenant, `mem_${randomUUID()}`, 'Prefers calls after six.');
    expect(await app.services.memories.insert(record)).toBe('created');
    const backup = await backupOf<MemoryRecord>(Collections.memories, [record._id]);
    expect(isSealed(backup[0]?.content)).toBe(true);
    expect(await app.runtime.cipher.openAll(backup)).toHaveLength(1);

    expect(await app.services.memories.withdraw(tenant, [record._id])).toBe(1);
    expect(await app.runtime.cipher.openAll(backup)).toEqual([]);
    expect(await app.runtime.cipher.vault.idsWithKeys(tenant, [record._id])).toEqual([]);
    expect(await app.services.memories.withdraw(tenant, [record._id])).toBe(0);
  });

  it('withdraws only the events its own stage recorded, and shreds exactly those', async () => {
    const mine = await recordEvent('stg-mine', 'Asked for a refund on the spot.');
    const theirs = await recordEvent('stg-theirs', 'Asked for the invoice by post.');
    const backup = await backupOf<EventRecord>(Collections.events, [mine._id, theirs._id]);
    expect(backup).toHaveLength(2);

    expect(await app.services.events.withdrawRecordedBy(tenant, 'stg-mine', [mine._id, theirs._id])).toBe(1);
    const opened = await app.runtime.cipher.openAll(backup);
    expect(opened.map((e) => e._id)).toEqual([theirs._id]);
    expect(await app.services.events.get(tenant, theirs._id)).not.toBeNull();
    expect(await app.runtime.cipher.vault.idsWithKeys(tenant, [mine._id, theirs._id])).toEqual([theirs._id]);
  });

  it('withdraws an event a write recorded itself (a dispute’s resolution): a backup of it opens nothing', async () => {
    const event = await recordEvent('stg-dispute', 'The reviewer found the earlier note wrong.');
    const backup = await backupOf<EventRecord>(Collections.events, [event._id]);
    expect(await app.services.events.withdraw(tenant, [event._id])).toBe(1);
    expect(await app.runtime.cipher.openAll(backup)).toEqual([]);
    expect(await app.services.events.get(tenant, event._id)).toBeNull();
  });
});
