/**
 * Removes what the release check's tenant left on the shared stack: its retention schedule (which would start a
 * sweep every hour on a task queue no worker polls once the check ends), any sweep it started, its Elasticsearch
 * indexes and its MongoDB documents. Returns what could not be removed, for the report; never throws.
 */
import { Client as ElasticsearchClient } from '@elastic/elasticsearch';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { retentionScheduleId } from '../../src/temporal/retention-schedule.js';
import { tenantIndexNames } from '../../src/substrate/search/index-layout.js';
import type { StackManifest } from '../../stack/stack-config.js';

export interface CheckTenant {
  stack: StackManifest;
  database: string;
  indexPrefix: string;
  tenant: string;
}

export async function removeCheckTenant({ stack, database, indexPrefix, tenant }: CheckTenant): Promise<string[]> {
  const left: string[] = [];
  const attempt = async (what: string, run: () => Promise<unknown>) => {
    await run().catch((error: unknown) => left.push(`${what}: ${(error as Error).message.split('\n')[0]}`));
  };
  const connection = await Connection.connect({ address: stack.temporalAddress, connectTimeout: 5000 }).catch(
    () => undefined,
  );
  if (connection) {
    const client = new Client({ connection });
    const id = retentionScheduleId(tenant);
    await attempt('retention schedule', async () => {
      await client.schedule
        .getHandle(id)
        .delete()
        .catch((error: unknown) => {
          if (!(error instanceof ScheduleNotFoundError)) throw error;
        });
    });
    await attempt('retention sweep', async () => {
      const handle = client.workflow.getHandle(id);
      const status = await handle.describe().then(
        (d) => d.status.name,
        () => 'NONE',
      );
      if (status === 'RUNNING') await handle.terminate('the release check ended');
    });
    await connection.close();
  } else left.push('temporal: not reachable');

  const es = new ElasticsearchClient({ node: stack.elasticsearchUrl });
  const names = tenantIndexNames(indexPrefix, tenant);
  await attempt('elasticsearch indexes', () => es.indices.delete({ index: names.index, ignore_unavailable: true }));
  await es.close();

  const mongoUri = new URL(stack.mongoUri);
  mongoUri.pathname = `/${database}`;
  const mongo = new MongoClient(mongoUri.toString(), { serverSelectionTimeoutMS: 5000 });
  await attempt('mongodb documents', async () => {
    const db = mongo.db(database);
    // One collection at a time: each delete matches one tenant's few documents.
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      await db.collection(name).deleteMany({ tenant });
    }
  });
  await mongo.close();
  return left;
}
