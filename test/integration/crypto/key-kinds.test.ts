/**
 * Data keys stored one document per record (before pages) are read by kind (a key's record id prefix: `mem`,
 * `evt`…), so that reading many memories' keys does not scan the events' keys too. Keys stored before kinds were recorded must still open their records, and a rotation
 * gives them their kind. Real database; a database and a keyring of the test's own.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import { keyKindOf, refKey } from '../../../src/substrate/crypto/data-key-vault.js';
import { rotateKeks } from '../../../src/substrate/crypto/kek-rotation.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { SCAN_MIN_IDS } from '../../../src/substrate/mongo/bounded-scan.js';
import { storeRecordKeys } from '../../support/record-keys.js';
import { scratchVaults } from '../../support/scratch-vaults.js';

describe('data keys read by kind', () => {
  const scratch = scratchVaults('key-kinds');
  let db: Db;
  const tenant = `t-${randomUUID().slice(0, 8)}`;
  const freshVault = () => scratch.freshVault();

  beforeAll(() => {
    db = scratch.open();
  });
  afterAll(() => scratch.close());

  it('names a key’s kind by its record id’s prefix', () => {
    expect(keyKindOf('mem_0a1b')).toBe('mem');
    expect(keyKindOf('evt_0a1b')).toBe('evt');
    expect(keyKindOf('probe:req_1')).toBe('other');
    expect(keyKindOf('_leading')).toBe('other');
    expect(keyKindOf('averyveryverylongprefix_1')).toBe('other');
  });

  it('opens every key, those stored before kinds were recorded included, and a rotation gives them their kind', async () => {
    const memories = Array.from({ length: SCAN_MIN_IDS + 100 }, () => `mem_${randomUUID().replaceAll('-', '')}`);
    const events = Array.from({ length: 600 }, () => `evt_${randomUUID().replaceAll('-', '')}`);
    const writer = await freshVault();
    // Keys stored one document per record, as before pages; a quarter of the memories' as before kinds: no kind.
    const legacy = new Set(memories.filter((_, n) => n % 4 === 0));
    const made = new Map([
      ...(await storeRecordKeys(db, writer.keks, tenant, events)),
      ...(await storeRecordKeys(db, writer.keks, tenant, memories, { withKind: (id) => !legacy.has(id) })),
    ]);
    const keys = db.collection<{ _id: string; kind?: string }>(Collections.dataKeys);
    expect(await keys.countDocuments({ tenant, kind: 'mem' })).toBe(memories.length - legacy.size);
    const byId = (ids: string[]) => ids.map((id) => ({ id, page: null }));

    const opened = await (await freshVault()).existing(tenant, byId(memories));
    expect(opened.size).toBe(memories.length);
    for (const id of memories) expect(opened.get(refKey({ id, page: null }))?.equals(made.get(id)!)).toBe(true);

    const outcome = await rotateKeks(writer, writer.keks, { settleMs: 10 });
    expect(outcome.kept).toEqual([]);
    expect(await keys.countDocuments({ tenant, kind: 'mem' })).toBe(memories.length);
    expect(await keys.countDocuments({ tenant, kind: 'evt' })).toBe(events.length);
    const afterRotation = await (await freshVault()).existing(tenant, byId([...memories, ...events]));
    expect(afterRotation.size).toBe(memories.length + events.length);
  });
});
