/**
 * The persistence kit's functions on the real local FerretDB: `duplicateKeysOnly`, the one reading of a write's
 * duplicate keys that every store inserting idempotently relies on to tell "already there" from a failure it must not
 * swallow (also on shapes a server may send that the local one does not), and `findOwn`, a tenant's document by id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { duplicateKeysOnly, findOwn } from '../../../src/substrate/mongo/collections.js';
import { testRuntime, uniqueId } from '../../support/harness.js';

interface Doc {
  _id: string;
  n: number;
}

interface Owned {
  _id: string;
  tenant: string;
  n: number;
}

let runtime: Runtime;
const collectionName = uniqueId('duplicate-keys');
const docs = () => runtime.db.collection<Doc>(collectionName);
const failure = (write: Promise<unknown>) =>
  write.then(
    () => {
      throw new Error('the write was expected to fail');
    },
    (error: unknown) => error,
  );

beforeAll(async () => {
  runtime = testRuntime();
  await docs().insertMany([
    { _id: 'a', n: 1 },
    { _id: 'b', n: 2 },
  ]);
});
afterAll(async () => {
  await docs().drop();
  await runtime.close();
});

describe('duplicateKeysOnly, on the real server', () => {
  it('reads a single insert refused as a duplicate as position 0', async () => {
    expect(duplicateKeysOnly(await failure(docs().insertOne({ _id: 'a', n: 9 })))).toEqual([0]);
  });

  it('gives the positions of an unordered batch whose failures were all duplicates, and the rest was written', async () => {
    const error = await failure(
      docs().insertMany(
        [
          { _id: 'a', n: 9 },
          { _id: 'c', n: 3 },
          { _id: 'b', n: 9 },
        ],
        { ordered: false },
      ),
    );
    expect(duplicateKeysOnly(error)).toEqual([0, 2]);
    expect(await docs().countDocuments({ _id: 'c' })).toBe(1);
  });

  it('gives the first position of an ordered batch, where the write stopped', async () => {
    const error = await failure(
      docs().insertMany(
        [
          { _id: 'd', n: 4 },
          { _id: 'b', n: 9 },
          { _id: 'e', n: 5 },
        ],
        { ordered: true },
      ),
    );
    expect(duplicateKeysOnly(error)).toEqual([1]);
  });

  it('is null for a failure that is not a duplicate', async () => {
    expect(duplicateKeysOnly(new Error('connection reset'))).toBeNull();
    expect(duplicateKeysOnly(Object.assign(new Error('not primary'), { code: 10107 }))).toBeNull();
  });
});

describe('duplicateKeysOnly, on shapes another server may send', () => {
  it('never lets a duplicate hide another failure of the same batch', () => {
    const mixed = Object.assign(new Error('bulk'), {
      code: 11000,
      writeErrors: [
        { code: 11000, index: 0 },
        { code: 121, index: 1 },
      ],
    });
    expect(duplicateKeysOnly(mixed)).toBeNull();
  });

  it('reads a single write error given as an object, not a list', () => {
    expect(duplicateKeysOnly(Object.assign(new Error('bulk'), { writeErrors: { code: 11000, index: 3 } }))).toEqual([
      3,
    ]);
  });
});

describe('findOwn', () => {
  const owned = () => runtime.db.collection<Owned>(`${collectionName}-owned`);
  afterAll(() => owned().drop());

  it("gives a tenant its own document by id, and never another tenant's under the same id", async () => {
    await owned().insertOne({ _id: 'req-1', tenant: 't-a', n: 1 });
    expect(await findOwn(owned(), 't-a', 'req-1')).toEqual({ _id: 'req-1', tenant: 't-a', n: 1 });
    expect(await findOwn(owned(), 't-b', 'req-1')).toBeNull();
    expect(await findOwn(owned(), 't-a', 'req-2')).toBeNull();
  });

  it('treats odd bytes in the id or the tenant as plain values, never as a query', async () => {
    await owned().insertOne({ _id: 'req-$ne', tenant: 't-a', n: 2 });
    expect(await findOwn(owned(), 't-a', 'req-$ne')).toMatchObject({ n: 2 });
    expect(await findOwn(owned(), 't-a\u0000', 'req-$ne')).toBeNull();
    expect(await findOwn(owned(), 't-a', 'req-$ne\u0000')).toBeNull();
    expect(await findOwn(owned(), '.*', 'req-1')).toBeNull();
  });
});
