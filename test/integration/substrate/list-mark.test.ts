/**
 * A mark added to a list field (a legal hold's read restriction, a correction mark) stays added when another
 * writer rewrites the whole row from a read taken before the mark landed — what the local server does on every
 * update. The rewrite is made here as the server makes it: the row as read before, written back by `_id`. Real
 * database; a collection of this test's own.
 */
import type { Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/app/runtime.js';
import { addToListUntilKept, LIST_MARK_ROUNDS } from '../../../src/substrate/mongo/list-mark.js';
import { testRuntime, uniqueId } from '../../support/harness.js';

interface Row {
  _id: string;
  tenant: string;
  restrictedBy?: string[];
  contestedBy?: string[];
}

let runtime: Runtime;
let rows: Collection<Row>;
const tenant = uniqueId('list-mark');

beforeAll(async () => {
  runtime = testRuntime();
  rows = runtime.db.collection<Row>('list_mark_test');
  await rows.createIndex({ tenant: 1 });
});
afterAll(async () => {
  await rows.deleteMany({ tenant });
  await runtime.close();
});

describe('a list mark that stays added', () => {
  it('adds the mark again when a whole-row rewrite from an older read drops it', async () => {
    const ids = [`${tenant}:a`, `${tenant}:b`, `${tenant}:c`];
    await rows.insertMany(ids.map((_id) => ({ _id, tenant, contestedBy: [] })));
    // Another writer read the rows before the hold, and rewrites them whole after the hold's first round.
    const before = await rows.find({ tenant }).toArray();
    let rewrites = 0;
    const kept = await addToListUntilKept(rows, tenant, ids, 'restrictedBy', 'hold-1', 'hold restriction', async () => {
      if (rewrites++ > 0) return;
      for (const row of before) await rows.replaceOne({ _id: row._id }, { ...row, contestedBy: ['rct-1'] });
    });
    expect(kept).toBe(3);
    expect(rewrites).toBe(2);
    const after = await rows.find({ tenant }).toArray();
    for (const row of after) {
      expect(row.restrictedBy).toEqual(['hold-1']);
      // The other writer's own change is not undone either.
      expect(row.contestedBy).toEqual(['rct-1']);
    }
  });

  it('gives up with an error, not a silent loss, when every round is undone', async () => {
    const id = `${tenant}:d`;
    await rows.insertOne({ _id: id, tenant });
    const before = (await rows.findOne({ _id: id }))!;
    const lost = addToListUntilKept(rows, tenant, [id], 'restrictedBy', 'hold-2', 'hold restriction', async () => {
      await rows.replaceOne({ _id: id }, before);
    });
    await expect(lost).rejects.toThrow(/1 documents kept losing their hold restriction/);
    expect(LIST_MARK_ROUNDS).toBeGreaterThan(1);
  });

  it('counts no document that is gone', async () => {
    const id = `${tenant}:e`;
    await rows.insertOne({ _id: id, tenant });
    expect(await addToListUntilKept(rows, tenant, [id, `${tenant}:missing`], 'restrictedBy', 'h', 'mark')).toBe(1);
  });
});
