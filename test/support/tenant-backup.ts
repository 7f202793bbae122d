/**
 * A backup of one tenant, as an operator's tools would take and restore it on the local stack: every document of
 * the tenant in every MongoDB collection (the driver's view of a `mongodump --query '{"tenant": T}'`; FerretDB on
 * PostgreSQL), and the tenant's index whole (settings, mappings, aliases and every document with its `_source`,
 * vectors included), as a snapshot of that index would hold it. No snapshot repository is configured locally.
 */
import type { Client as Elasticsearch, estypes } from '@elastic/elasticsearch';
import type { Db, Document } from 'mongodb';
import { Collections } from '../../src/substrate/mongo/collections.js';

export interface TenantBackup {
  tenant: string;
  mongo: Record<string, Document[]>;
  index: {
    name: string;
    settings: estypes.IndicesIndexSettings;
    mappings: estypes.MappingTypeMapping;
    aliases: Record<string, estypes.IndicesAlias>;
    documents: { _id: string; _source: unknown }[];
  } | null;
}

/** Settings Elasticsearch sets itself on creation: a restore does not take them from the backup. */
const GENERATED_SETTINGS = ['uuid', 'creation_date', 'provided_name', 'version', 'history', 'routing'];

export async function backUpTenant(
  db: Db,
  es: Elasticsearch,
  tenant: string,
  indexName: string | null,
): Promise<TenantBackup> {
  const mongo: Record<string, Document[]> = {};
  for (const name of Object.values(Collections)) mongo[name] = await db.collection(name).find({ tenant }).toArray();
  if (!indexName) return { tenant, mongo, index: null };
  const described = (await es.indices.get({ index: indexName }))[indexName]!;
  const settings: Record<string, unknown> = { ...described.settings?.index };
  for (const key of GENERATED_SETTINGS) delete settings[key];
  const documents: { _id: string; _source: unknown }[] = [];
  let page = await es.search({ index: indexName, scroll: '1m', size: 500, query: { match_all: {} } });
  while (page.hits.hits.length > 0) {
    documents.push(...page.hits.hits.map((h) => ({ _id: h._id!, _source: h._source })));
    page = await es.scroll({ scroll_id: page._scroll_id!, scroll: '1m' });
  }
  await es.clearScroll({ scroll_id: page._scroll_id! });
  return {
    tenant,
    mongo,
    index: {
      name: indexName,
      settings,
      mappings: described.mappings ?? {},
      aliases: described.aliases ?? {},
      documents,
    },
  };
}

/**
 * Puts the tenant back as the backup holds it: its documents in every collection are replaced by the backup's, and
 * its index is deleted and created again from the backup (as `_snapshot/…/_restore` of a closed or deleted index).
 */
export async function restoreTenant(db: Db, es: Elasticsearch, backup: TenantBackup): Promise<void> {
  for (const [name, docs] of Object.entries(backup.mongo)) {
    await db.collection(name).deleteMany({ tenant: backup.tenant });
    if (docs.length > 0) await db.collection(name).insertMany(docs);
  }
  if (!backup.index) return;
  const { name, settings, mappings, aliases, documents } = backup.index;
  await es.indices.delete({ index: name, ignore_unavailable: true });
  await es.indices.create({ index: name, settings: { index: settings }, mappings, aliases });
  if (documents.length > 0) {
    await es.bulk({
      refresh: true,
      operations: documents.flatMap((d) => [{ index: { _index: name, _id: d._id } }, d._source]),
    });
  }
}
