/**
 * The baseline of the erasure benchmark: the same deletes a careful engineer would script by hand on the
 * same stores — no workflow, no tombstones, no probes, no verification, no certificate, no audit.
 *
 *   locate    ids of the subject's events and memories (indexed equality on tenant + subjects)
 *   closure   BFS over the lineage edges, level by level, 32 equality lookups in flight
 *   mongodb   `deleteOne` by `_id`, 32 in flight, for the memories, events and traversed lineage edges
 *   index     `_bulk` delete by id (1 000 per request), then refresh
 *   expunge   force merge `only_expunge_deletes` + flush + `_segments`, again every second until 0 deleted
 *   compact   `compact` with `force: true` on memories, events and lineage (VACUUM FULL locally)
 */
import { countSegments } from '../../src/substrate/search/elasticsearch-search-index.js';
import type { Client as EsClient } from '@elastic/elasticsearch';
import type { Db } from 'mongodb';
import { Collections, mapBounded } from '../../src/substrate/mongo/collections.js';

const CONCURRENCY = 32;
const EXPUNGE_POLL_MS = 1000;
const EXPUNGE_BOUND_MS = 5 * 60_000;
const MERGE_TIMEOUT_MS = 10 * 60_000;

export interface PlainStep {
  step: string;
  ms: number;
  detail: string;
}

export interface PlainResult {
  totalMs: number;
  steps: PlainStep[];
  expungeRounds: number;
  clean: boolean;
}

/** Deleted documents and segments of an index, as `_segments` reports them now. */
export async function segmentStats(es: EsClient, index: string): Promise<{ deletedDocs: number; segments: number }> {
  return countSegments(await es.indices.segments({ index }));
}

export async function plainErasure(
  db: Db,
  es: EsClient,
  alias: string,
  tenant: string,
  subject: string,
): Promise<PlainResult> {
  const steps: PlainStep[] = [];
  const started = performance.now();
  const timedStep = async <T>(step: string, run: () => Promise<T>, detail: (value: T) => string): Promise<T> => {
    const start = performance.now();
    const value = await run();
    steps.push({ step, ms: performance.now() - start, detail: detail(value) });
    return value;
  };
  const events = db.collection<{ _id: string }>(Collections.events);
  const memories = db.collection<{ _id: string }>(Collections.memories);
  const lineage = db.collection<{ _id: string; child: string }>(Collections.lineage);

  const located = await timedStep(
    'locate',
    async () => {
      const [e, m] = await Promise.all([
        events.find({ tenant, subjects: subject }, { projection: { _id: 1 } }).toArray(),
        memories.find({ tenant, subjects: subject }, { projection: { _id: 1 } }).toArray(),
      ]);
      return { events: e.map((d) => d._id), memories: m.map((d) => d._id) };
    },
    (v) => `${v.events.length} events, ${v.memories.length} memories`,
  );

  const closure = await timedStep(
    'closure (BFS over lineage)',
    async () => {
      const seen = new Set([...located.events, ...located.memories]);
      const derived: string[] = [];
      const edgeIds: string[] = [];
      let frontier = [...seen];
      let rounds = 0;
      while (frontier.length > 0) {
        rounds++;
        const levels = await mapBounded(frontier, CONCURRENCY, (input) =>
          lineage.find({ input, tenant }, { projection: { _id: 1, child: 1 }, batchSize: 10_000 }).toArray(),
        );
        const next: string[] = [];
        for (const docs of levels) {
          for (const doc of docs) {
            edgeIds.push(doc._id);
            if (seen.has(doc.child)) continue;
            seen.add(doc.child);
            derived.push(doc.child);
            next.push(doc.child);
          }
        }
        frontier = next;
      }
      return { derived, edgeIds, rounds };
    },
    (v) => `${v.derived.length} derived, ${v.edgeIds.length} edges, ${v.rounds} rounds`,
  );

  const memoryIds = [...located.memories, ...closure.derived.filter((id) => !id.startsWith('evt_'))];
  const eventIds = [...located.events, ...closure.derived.filter((id) => id.startsWith('evt_'))];
  await timedStep(
    'delete MongoDB (deleteOne by _id, 32 in flight)',
    async () => {
      const work = [
        ...memoryIds.map((id) => ({ collection: memories, id })),
        ...eventIds.map((id) => ({ collection: events, id })),
        ...closure.edgeIds.map((id) => ({ collection: lineage, id })),
      ] as const;
      const results = await mapBounded(work, CONCURRENCY, ({ collection, id }) => collection.deleteOne({ _id: id }));
      return results.reduce((n, r) => n + r.deletedCount, 0);
    },
    (deleted) =>
      `${deleted} deleted (${memoryIds.length} memories, ${eventIds.length} events, ${closure.edgeIds.length} edges)`,
  );

  await timedStep(
    'delete Elasticsearch (_bulk by id + refresh)',
    async () => {
      let deleted = 0;
      for (let i = 0; i < memoryIds.length; i += 1000) {
        const response = await es.bulk({
          index: alias,
          operations: memoryIds.slice(i, i + 1000).map((id) => ({ delete: { _id: id } })),
        });
        deleted += response.items.filter((item) => item.delete?.result === 'deleted').length;
      }
      await es.indices.refresh({ index: alias });
      return deleted;
    },
    (deleted) => `${deleted} documents`,
  );

  const expunge = await timedStep(
    'expunge (forcemerge + flush + _segments, every 1 s)',
    async () => {
      const deadline = performance.now() + EXPUNGE_BOUND_MS;
      let rounds = 0;
      let firstDeleted = -1;
      for (;;) {
        rounds++;
        await es.indices.forcemerge({ index: alias, only_expunge_deletes: true }, { requestTimeout: MERGE_TIMEOUT_MS });
        await es.indices.flush({ index: alias, wait_if_ongoing: true });
        const stats = await segmentStats(es, alias);
        if (firstDeleted < 0) firstDeleted = stats.deletedDocs;
        if (stats.deletedDocs === 0) return { rounds, firstDeleted, clean: true };
        if (performance.now() > deadline) return { rounds, firstDeleted, clean: false };
        await new Promise((resolve) => setTimeout(resolve, EXPUNGE_POLL_MS));
      }
    },
    (v) =>
      `${v.rounds} rounds (${v.firstDeleted} deleted docs after the first)${v.clean ? '' : ' — NOT CLEAN at the bound'}`,
  );

  await timedStep(
    'compact force (memories, events, lineage)',
    async () => {
      for (const name of [Collections.memories, Collections.events, Collections.lineage]) {
        await db.command({ compact: name, force: true });
      }
      return 3;
    },
    (n) => `${n} collections`,
  );

  return { totalMs: performance.now() - started, steps, expungeRounds: expunge.rounds, clean: expunge.clean };
}
