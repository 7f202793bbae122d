/**
 * The persistence kit's functions on the real local FerretDB: `duplicateKeysOnly`, the one reading of a write's
 * duplicate keys that every store inserting idempotently relies on to tell "already there" from a failure it must not
 * swallow (also on shapes a server may send that the local one does not), `findOwn`, a tenant's document by id,
 * `insertOnce`, an idempotent filing that never hands back another tenant's document, and `replaceOwn`, a write by id
 * that never overwrites another tenant's document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import {
  duplicateKeysOnly,
  findOwn,
  insertOnce,
  isDuplicateKey,
  replaceOwn,
} from '../../../src/substrate/mongo/collections.js';
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

  it('reads an operator-like id as a plain string: only the document stored under exactly that id, and only its own', async () => {
    const operatorLike = '{"$ne":null}';
    expect(await findOwn(owned(), 't-a', operatorLike)).toBeNull();
    expect(await findOwn(owned(), operatorLike, 'req-1')).toBeNull();
    await owned().insertOne({ _id: operatorLike, tenant: 't-b', n: 3 });
    expect(await findOwn(owned(), 't-b', operatorLike)).toEqual({ _id: operatorLike, tenant: 't-b', n: 3 });
    expect(await findOwn(owned(), 't-a', operatorLike)).toBeNull();
  });

  it('with a projection, narrows the fields returned and never which document', async () => {
    const narrowed = { projection: { n: 1 } };
    expect(await findOwn(owned(), 't-a', 'req-1', narrowed)).toEqual({ _id: 'req-1', n: 1 });
    expect(await findOwn(owned(), 't-b', 'req-1', narrowed)).toBeNull();
    expect(await findOwn(owned(), 't-a', 'req-1\u0000', narrowed)).toBeNull();
    expect(await findOwn(owned(), 't-a', '{"$ne":null}', narrowed)).toBeNull();
  });
});

describe('insertOnce', () => {
  const filed = () => runtime.db.collection<Owned>(`${collectionName}-filed`);
  afterAll(() => filed().drop());

  it('stores a new document, and gives back the stored one when the same tenant files its id again', async () => {
    expect(await insertOnce(filed(), { _id: 'f-1', tenant: 't-a', n: 1 })).toEqual({
      doc: { _id: 'f-1', tenant: 't-a', n: 1 },
      created: true,
    });
    expect(await insertOnce(filed(), { _id: 'f-1', tenant: 't-a', n: 2 })).toEqual({
      doc: { _id: 'f-1', tenant: 't-a', n: 1 },
      created: false,
    });
  });

  it("fails with the insert's own error when another tenant holds the id, and shows nothing of that document", async () => {
    const error = await failure(insertOnce(filed(), { _id: 'f-1', tenant: 't-b', n: 9 }));
    expect(isDuplicateKey(error)).toBe(true);
    expect(JSON.stringify(error)).not.toContain('t-a');
    expect(await filed().findOne({ _id: 'f-1' })).toEqual({ _id: 'f-1', tenant: 't-a', n: 1 });
  });
});

describe('replaceOwn', () => {
  const kept = () => runtime.db.collection<Owned>(`${collectionName}-kept`);
  afterAll(() => kept().drop());

  it("writes a tenant's document, then replaces the tenant's own with a later one", async () => {
    await replaceOwn(kept(), 'k-1', { tenant: 't-a', n: 1 });
    await replaceOwn(kept(), 'k-1', { tenant: 't-a', n: 2 });
    expect(await kept().find({ _id: 'k-1' }).toArray()).toEqual([{ _id: 'k-1', tenant: 't-a', n: 2 }]);
  });

  it("fails as a duplicate key when another tenant names the id, and leaves that tenant's document as it was", async () => {
    await replaceOwn(kept(), 'k-2', { tenant: 't-a', n: 1 });
    const error = await failure(replaceOwn(kept(), 'k-2', { tenant: 't-b', n: 9 }));
    expect(isDuplicateKey(error)).toBe(true);
    expect(await kept().find({ _id: 'k-2' }).toArray()).toEqual([{ _id: 'k-2', tenant: 't-a', n: 1 }]);
  });

  it('keeps an id with odd bytes as a plain value: no other document is touched', async () => {
    await replaceOwn(kept(), 'k-3', { tenant: 't-a', n: 3 });
    await replaceOwn(kept(), '{"$ne":null}', { tenant: 't-a', n: 4 });
    expect(await findOwn(kept(), 't-a', 'k-3')).toEqual({ _id: 'k-3', tenant: 't-a', n: 3 });
    expect(await findOwn(kept(), 't-a', '{"$ne":null}')).toEqual({ _id: '{"$ne":null}', tenant: 't-a', n: 4 });
  });
});
