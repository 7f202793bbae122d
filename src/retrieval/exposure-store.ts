/**
 * Exposure tracing: which retrievals returned a memory and which of them put it into a prompt. A retrieval keeps
 * who asked, for what purpose and intent, when, and a keyed hash of the query (never its text); one exposure
 * document per (retrieval, memory) says when it was returned and, once the agent reports it, when it reached a
 * prompt. An erasure reduces the exposure documents of its records to keyed hashes of their ids.
 */
import type { Db } from 'mongodb';
import { Collections, findOwn, isDuplicateKey, mapBounded } from '../substrate/mongo/collections.js';
import type { Fingerprinter } from '../substrate/fingerprint.js';
import { findMatching } from '../substrate/mongo/bounded-scan.js';
import type { ExposureSummary } from '../governance/erasure/side-records.js';
import type { ReaderOfRecords } from '../governance/rights/selector-preview.js';
import { keysetPage, type Page, type PageKey } from '../substrate/mongo/keyset-page.js';

/** The route a read took: retrieval, search, or a read by id of a memory or an event. */
export type ReadRoute = 'retrieve' | 'search' | 'memory' | 'event';

export interface RetrievalRecord {
  _id: string;
  tenant: string;
  principal: string;
  purpose: string;
  intent: string;
  /** Absent on retrievals recorded before every content route was traced (all of them by `/retrieve`). */
  route?: ReadRoute;
  queryHash: string;
  returned: number;
  at: Date;
}

interface ExposureDocument {
  /** `<retrievalId>:<memoryId>` while the memory exists; the memory part is a keyed hash once it is erased. */
  _id: string;
  tenant: string;
  retrievalId: string;
  /** The memory's id, or its keyed hash after an erasure. */
  memoryId: string;
  principal: string;
  retrievedAt: Date;
  exposedAt: Date | null;
  erased?: true;
}

export interface ExposureStore {
  recordRetrieval(retrieval: RetrievalRecord, memoryIds: readonly string[]): Promise<void>;
  getRetrieval(tenant: string, retrievalId: string): Promise<RetrievalRecord | null>;
  /**
   * Marks the memories as put into a prompt. If the retrieval did not return some of them, nothing is marked and
   * those ids are returned.
   */
  recordExposures(tenant: string, retrievalId: string, memoryIds: readonly string[], at: Date): Promise<string[]>;
  /** For the DPO and the auditor: every retrieval that returned the memory, and whether it reached a prompt. */
  exposuresOf(
    tenant: string,
    memoryId: string,
  ): Promise<{ retrievalId: string; principal: string; retrievedAt: Date; exposedAt: Date | null }[]>;
  /** `exposuresOf` for many memories at once (a bounded pass over the tenant when they are many), by memory id. */
  exposuresOfMany(
    tenant: string,
    memoryIds: readonly string[],
  ): Promise<{ memoryId: string; retrievalId: string; principal: string; retrievedAt: Date; exposedAt: Date | null }[]>;
  /** Who read the given memories (ids of principals, not what they asked): reads, prompts reached, last read. */
  readersOf(tenant: string, memoryIds: readonly string[]): Promise<ReaderOfRecords[]>;
  /** The same, oldest retrieval first, a page at a time. */
  exposuresPage(
    tenant: string,
    memoryId: string,
    limit: number,
    after: PageKey | null,
  ): Promise<Page<{ retrievalId: string; principal: string; retrievedAt: Date; exposedAt: Date | null }>>;
  /** Counts and times of the given memories' exposures, before or after `forget` (the erasure's statement). */
  summarise(tenant: string, memoryIds: readonly string[]): Promise<ExposureSummary>;
  /** Replaces the erased memories' ids in their exposure documents by keyed hashes; returns how many changed. */
  forget(tenant: string, memoryIds: readonly string[]): Promise<number>;
  ensureIndexes(): Promise<void>;
}

const exposureId = (retrievalId: string, memoryId: string) => `${retrievalId}:${memoryId}`;

export function createMongoExposureStore(db: Db, fingerprints: Fingerprinter): ExposureStore {
  const retrievals = db.collection<RetrievalRecord>(Collections.retrievals);
  const exposures = db.collection<ExposureDocument>(Collections.exposures);
  const hashOf = (tenant: string, memoryId: string) => `h:${fingerprints.of('exposed-memory', tenant, memoryId)}`;

  return {
    async recordRetrieval(retrieval, memoryIds) {
      // Both writes at once, one round trip of latency: if one fails the read fails, and what the other left is a
      // record of a read that did not reach its caller, which over-states exposure rather than hiding it.
      await Promise.all([
        retrievals.insertOne(retrieval),
        memoryIds.length === 0
          ? null
          : exposures.insertMany(
              [...new Set(memoryIds)].map((memoryId) => ({
                _id: exposureId(retrieval._id, memoryId),
                tenant: retrieval.tenant,
                retrievalId: retrieval._id,
                memoryId,
                principal: retrieval.principal,
                retrievedAt: retrieval.at,
                exposedAt: null,
              })),
              { ordered: false },
            ),
      ]);
    },
    getRetrieval: (tenant, retrievalId) => findOwn(retrievals, tenant, retrievalId),
    async recordExposures(tenant, retrievalId, memoryIds, at) {
      const ids = [...new Set(memoryIds)];
      const known = await mapBounded(ids, 16, (memoryId) =>
        exposures.countDocuments({ _id: exposureId(retrievalId, memoryId), tenant }),
      );
      const unknown = ids.filter((_, i) => known[i] === 0);
      if (unknown.length > 0) return unknown;
      await mapBounded(ids, 16, (memoryId) =>
        // The first report counts: a repeated report of the same prompt does not move its time.
        exposures.updateOne(
          { _id: exposureId(retrievalId, memoryId), tenant, exposedAt: null },
          { $set: { exposedAt: at } },
        ),
      );
      return [];
    },
    async exposuresOf(tenant, memoryId) {
      const found = await exposures.find({ tenant, memoryId }).sort({ retrievedAt: 1 }).limit(10_000).toArray();
      return found.map((e) => ({
        retrievalId: e.retrievalId,
        principal: e.principal,
        retrievedAt: e.retrievedAt,
        exposedAt: e.exposedAt,
      }));
    },
    async exposuresOfMany(tenant, memoryIds) {
      const found = await findMatching(exposures, tenant, 'memoryId', [...new Set(memoryIds)]);
      return found.map((e) => ({
        memoryId: e.memoryId,
        retrievalId: e.retrievalId,
        principal: e.principal,
        retrievedAt: e.retrievedAt,
        exposedAt: e.exposedAt,
      }));
    },
    async readersOf(tenant, memoryIds) {
      const all = await findMatching(exposures, tenant, 'memoryId', [...new Set(memoryIds)]);
      const readers = new Map<string, { retrievals: Set<string>; prompts: number; last: number }>();
      for (const e of all) {
        const reader = readers.get(e.principal) ?? { retrievals: new Set<string>(), prompts: 0, last: 0 };
        reader.retrievals.add(e.retrievalId);
        if (e.exposedAt) reader.prompts++;
        reader.last = Math.max(reader.last, e.retrievedAt.getTime());
        readers.set(e.principal, reader);
      }
      return [...readers]
        .map(([principal, r]) => ({
          principal,
          retrievals: r.retrievals.size,
          prompts: r.prompts,
          lastRetrievedAt: new Date(r.last),
        }))
        .sort((a, b) => a.principal.localeCompare(b.principal));
    },
    async exposuresPage(tenant, memoryId, limit, after) {
      const page = await keysetPage(exposures, { tenant, memoryId }, 'retrievedAt', 1, limit, after);
      return {
        items: page.items.map((e) => ({
          retrievalId: e.retrievalId,
          principal: e.principal,
          retrievedAt: e.retrievedAt,
          exposedAt: e.exposedAt,
        })),
        next: page.next,
      };
    },
    async summarise(tenant, memoryIds) {
      // By clear id and by keyed hash (under every fingerprint key, for a trace re-keyed before a rotation): a
      // retried certification finds the trace whether or not it was re-keyed yet.
      const keys = [...new Set(memoryIds)].flatMap((memoryId) => [
        memoryId,
        ...fingerprints.all('exposed-memory', tenant, memoryId).map((hash) => `h:${hash}`),
      ]);
      const all = await findMatching(exposures, tenant, 'memoryId', keys);
      const times = (dates: Date[]) => {
        const sorted = dates.map((d) => d.getTime()).sort((a, b) => a - b);
        return sorted.length === 0 ? [null, null] : [new Date(sorted[0]!), new Date(sorted[sorted.length - 1]!)];
      };
      const [firstRetrievedAt, lastRetrievedAt] = times(all.map((e) => e.retrievedAt));
      const exposed = all.flatMap((e) => (e.exposedAt ? [e.exposedAt] : []));
      const [firstExposedAt, lastExposedAt] = times(exposed);
      // Which route each read took (retrieve, search, a read by id): looked up on the reads themselves.
      const retrievalIds = [...new Set(all.map((e) => e.retrievalId))];
      const byRoute: Record<string, number> = {};
      for (const r of await findMatching(retrievals, tenant, '_id', retrievalIds, {
        projection: { _id: 1, route: 1 },
      })) {
        const route = r.route ?? 'retrieve';
        byRoute[route] = (byRoute[route] ?? 0) + 1;
      }
      return {
        byRoute,
        retrievals: retrievalIds.length,
        firstRetrievedAt: firstRetrievedAt ?? null,
        lastRetrievedAt: lastRetrievedAt ?? null,
        prompts: exposed.length,
        firstExposedAt: firstExposedAt ?? null,
        lastExposedAt: lastExposedAt ?? null,
      };
    },
    async forget(tenant, memoryIds) {
      const found = await findMatching(exposures, tenant, 'memoryId', memoryIds);
      const changed = await mapBounded(found, 16, async (e) => {
        // Re-keyed: the clear id leaves the document's key as well as its field. Insert first, then delete,
        // so that a crash in between leaves a duplicate a retry removes, never a lost exposure.
        const hashed = {
          ...e,
          _id: exposureId(e.retrievalId, hashOf(tenant, e.memoryId)),
          memoryId: hashOf(tenant, e.memoryId),
          erased: true as const,
        };
        try {
          await exposures.insertOne(hashed);
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
        await exposures.deleteOne({ _id: e._id });
        return 1;
      });
      return changed.reduce((a, b) => a + b, 0);
    },
    async ensureIndexes() {
      await exposures.createIndex({ tenant: 1, memoryId: 1 });
      await retrievals.createIndex({ tenant: 1, at: 1 });
    },
  };
}
