import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient } from 'mongodb';
import { testConfig, uniqueId } from '../../support/harness.js';

describe('MongoDB wire protocol (FerretDB on PostgreSQL locally)', () => {
  let client: MongoClient;
  beforeAll(async () => {
    client = new MongoClient(testConfig().mongo.uri);
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('writes a document, finds it by an indexed field, and deletes it', async () => {
    const collection = client
      .db(testConfig().mongo.dbName)
      .collection<{ _id: string; subject: string; n: number }>(uniqueId('stackcheck'));
    await collection.createIndex({ subject: 1 });
    await collection.insertMany([
      { _id: 'a', subject: 's1', n: 1 },
      { _id: 'b', subject: 's2', n: 2 },
    ]);
    expect(await collection.findOne({ subject: 's2' })).toEqual({ _id: 'b', subject: 's2', n: 2 });
    expect((await collection.deleteOne({ _id: 'b' })).deletedCount).toBe(1);
    expect(await collection.findOne({ subject: 's2' })).toBeNull();
    expect(await collection.countDocuments()).toBe(1);
    await collection.drop();
  });

  it('refuses a duplicate key on a unique index with E11000', async () => {
    const collection = client
      .db(testConfig().mongo.dbName)
      .collection<{ _id: string; key: string }>(uniqueId('unique'));
    await collection.createIndex({ key: 1 }, { unique: true });
    await collection.insertOne({ _id: 'a', key: 'k' });
    await expect(collection.insertOne({ _id: 'b', key: 'k' })).rejects.toMatchObject({ code: 11000 });
    await collection.drop();
  });
});
