/**
 * The erasure benchmark's dataset, written straight into the stores in the shapes they write themselves
 * (event and memory records, one lineage edge document per derivation edge, index documents through the
 * search index adapter) — the ingestion API would take far too long for 60 000 records.
 *
 * Per tenant: a subject with `events` events and `memories` memories (memory i cites event i mod events),
 * `views` derived views citing 1–3 of the subject's memories — the first half tagged with the subject (so
 * `locate` finds them), the second half tagged with other subjects (found only through lineage: collateral)
 * — and a control set of other subjects' events and memories, with their own lineage, that must survive.
 * The structure comes from a seeded generator, so the Lethe tenant and the plain tenant get the same graph.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import type { Services } from '../../app/services.js';
import type { TenantMacs } from '../../src/substrate/fingerprint.js';
import { eventIdOf, idempotencyKeyOf } from '../../src/substrate/events/event-store.js';
import { sha256Hex } from '../../src/shared/sha256.js';
import { lineageEdgeDoc, type LineageEdgeDoc } from '../../src/substrate/lineage/lineage-store.js';
import type { EventRecord, MemoryKind, MemoryRecord } from '../../src/substrate/model/records.js';
import { Collections } from '../../src/substrate/mongo/collections.js';
import { rng, sentenceMaker } from './substrate-measure.js';

export interface DatasetPlan {
  /** Events naming the subject. */
  events: number;
  /** Memories about the subject, each citing one of its events. */
  memories: number;
  /** Views derived from 1–3 of the subject's memories; half of them tagged with other subjects. */
  views: number;
  /** Other subjects' events and memories (memory i cites control event i mod controlEvents). */
  controlEvents: number;
  controlMemories: number;
}

export interface Dataset {
  tenant: string;
  subject: string;
  plan: DatasetPlan;
  events: EventRecord[];
  memories: MemoryRecord[];
  edges: LineageEdgeDoc[];
  /** What an erasure of the subject must remove, and what must stay. */
  expected: {
    located: number;
    derived: number;
    collateral: number;
    closure: number;
    closureEdges: number;
    controlEvents: number;
    controlMemories: number;
    controlEdges: number;
  };
}

const NAMESPACES = ['crm', 'support', 'sales', 'ops', 'product', 'marketing', 'success', 'docs'];

export function buildDataset(macs: TenantMacs, tenant: string, plan: DatasetPlan, seed: number): Dataset {
  const random = rng(seed);
  const sentence = sentenceMaker(random);
  const subject = `subject-bench-${seed}`;
  const now = new Date();
  const base = Date.UTC(2025, 0, 1);
  let n = 0;
  const at = () => new Date(base + n++ * 60_000);

  const event = (subjects: string[], k: number): EventRecord => {
    const content = `${sentence(30)} e${k}`;
    const contentHash = sha256Hex(content);
    const externalId = `ext-${seed}-${k}`;
    const idempotencyKey = idempotencyKeyOf('bench', externalId, contentHash);
    return {
      _id: eventIdOf(macs, tenant, idempotencyKey),
      tenant,
      namespace: NAMESPACES[k % NAMESPACES.length]!,
      source: 'bench',
      externalId,
      contentHash,
      idempotencyKey,
      subjects,
      content,
      sensitivity: 'internal',
      trustTier: 1,
      occurredAt: at(),
      recordedAt: now,
      correctionOf: null,
      recordedBy: 'bench-erasure',
      deleted: false,
    };
  };
  const memory = (
    subjects: string[],
    kind: MemoryKind,
    k: number,
    eventIds: string[],
    parentIds: string[],
  ): MemoryRecord => {
    const content = `${sentence(20)} m${k}`;
    return {
      _id: `mem_${randomUUID()}`,
      tenant,
      namespace: NAMESPACES[k % NAMESPACES.length]!,
      subjects,
      kind,
      attribute: null,
      content,
      contentHash: sha256Hex(content),
      validFrom: at(),
      validTo: null,
      recordedAt: now,
      policy: { purpose: 'customer-support', sensitivity: 'internal', jurisdiction: 'PT', retentionClass: 'standard' },
      provenance: {
        eventIds,
        parentIds,
        derivationRule: parentIds.length > 0 ? 'bench-view' : 'bench-extract',
        modelVersion: null,
        promptVersion: null,
      },
      trustTier: 1,
      confidence: 0.8,
      version: 1,
      status: 'active',
      writtenBy: 'bench-erasure',
      expiresAt: null,
      highImpact: false,
      statusReason: null,
      updatedAt: now,
    };
  };

  const edges: LineageEdgeDoc[] = [];
  const subjectEvents = Array.from({ length: plan.events }, (_, i) => event([subject], i));
  const subjectMemories = Array.from({ length: plan.memories }, (_, i) => {
    const source = subjectEvents[i % subjectEvents.length]!;
    const m = memory([subject], 'fact', i, [source._id], []);
    edges.push(lineageEdgeDoc(tenant, source._id, m._id));
    return m;
  });
  const tagged = Math.ceil(plan.views / 2);
  const views = Array.from({ length: plan.views }, (_, i) => {
    const parents = new Set<string>();
    const want = 1 + Math.floor(random() * 3);
    while (parents.size < Math.min(want, subjectMemories.length)) {
      parents.add(subjectMemories[Math.floor(random() * subjectMemories.length)]!._id);
    }
    const subjects = i < tagged ? [subject] : [`other-${seed}-${i % 50}`];
    const v = memory(subjects, 'view', plan.memories + i, [], [...parents]);
    for (const p of parents) edges.push(lineageEdgeDoc(tenant, p, v._id));
    return v;
  });
  const closureEdges = edges.length;
  const controlEvents = Array.from({ length: plan.controlEvents }, (_, i) =>
    event([`control-${seed}-${i % 20}`], plan.events + i),
  );
  const controlMemories = Array.from({ length: plan.controlMemories }, (_, i) => {
    const source = controlEvents[i % controlEvents.length]!;
    const m = memory(source.subjects, 'fact', plan.memories + plan.views + i, [source._id], []);
    edges.push(lineageEdgeDoc(tenant, source._id, m._id));
    return m;
  });

  return {
    tenant,
    subject,
    plan,
    events: [...subjectEvents, ...controlEvents],
    memories: [...subjectMemories, ...views, ...controlMemories],
    edges,
    expected: {
      located: plan.events + plan.memories + tagged,
      derived: plan.views - tagged,
      collateral: plan.views - tagged,
      closure: plan.events + plan.memories + plan.views,
      closureEdges,
      controlEvents: plan.controlEvents,
      controlMemories: plan.controlMemories,
      controlEdges: edges.length - closureEdges,
    },
  };
}

export interface SetupTimes {
  mongoMs: number;
  indexMs: number;
  analyzeMs: number;
}

/**
 * Writes the dataset: `insertMany` in chunks of 1 000 (two in flight) per collection (content sealed when `seal` is
 * given, as users' records are), the memories through
 * `services.index.upsert` (which embeds them and `_bulk`s in 500s; the index is created with the service's
 * index settings), then `compact` without force (VACUUM ANALYZE on the local server) so that each run
 * starts with fresh planner statistics.
 */
export async function writeDataset(
  db: Db,
  services: Services,
  data: Dataset,
  progress: (message: string) => void,
  /** Seals events' and memories' content as the stores do (a data key per record); absent: stored as it is. */
  seal?: <T extends EventRecord | MemoryRecord>(records: readonly T[]) => Promise<T[]>,
): Promise<SetupTimes> {
  const chunked = async <T extends { _id: string }>(name: string, docs: T[]) => {
    const collection = db.collection<T>(name);
    const slices: T[][] = [];
    for (let i = 0; i < docs.length; i += 1000) slices.push(docs.slice(i, i + 1000));
    let next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        for (let s = next++; s < slices.length; s = next++) {
          // eslint-disable-next-line @typescript-eslint/no-explicit-any
          await collection.insertMany(slices[s]! as any, { ordered: false });
        }
      }),
    );
  };
  let start = performance.now();
  await chunked(Collections.events, seal ? await seal(data.events) : data.events);
  await chunked(Collections.memories, seal ? await seal(data.memories) : data.memories);
  await chunked(Collections.lineage, data.edges);
  const mongoMs = performance.now() - start;
  progress(
    `  ${data.tenant}: MongoDB ${data.events.length} events, ${data.memories.length} memories, ${data.edges.length} edges in ${(mongoMs / 1000).toFixed(1)} s`,
  );

  start = performance.now();
  const slice = 5000;
  for (let i = 0; i < data.memories.length; i += slice) {
    const batch = data.memories.slice(i, i + slice);
    const last = i + slice >= data.memories.length;
    const result = await services.index.upsert(data.tenant, batch, { refresh: last });
    if (result.failed.length > 0)
      throw new Error(`indexing: ${result.failed.length} failed (${result.failed[0]!.type})`);
  }
  const indexMs = performance.now() - start;
  progress(`  ${data.tenant}: Elasticsearch ${data.memories.length} documents in ${(indexMs / 1000).toFixed(1)} s`);

  start = performance.now();
  for (const name of [Collections.events, Collections.memories, Collections.lineage]) {
    await db.command({ compact: name });
  }
  const analyzeMs = performance.now() - start;
  return { mongoMs, indexMs, analyzeMs };
}

/** What is left of a tenant after an erasure (not timed). */
export interface Leftovers {
  events: number;
  memories: number;
  edges: number;
  indexDocs: number;
  deletedDocs: number;
  /** Records of the closure still found by `_id` in MongoDB (a sample of up to 500 ids). */
  closureSampleFound: number;
}

export async function leftovers(
  db: Db,
  index: { count(): Promise<number>; segments(): Promise<{ deletedDocs: number }> },
  data: Dataset,
): Promise<Leftovers> {
  const tenant = data.tenant;
  const [events, memories, edges] = await Promise.all([
    db.collection(Collections.events).countDocuments({ tenant }),
    db.collection(Collections.memories).countDocuments({ tenant }),
    db.collection(Collections.lineage).countDocuments({ tenant }),
  ]);
  const closureIds = [
    ...data.events.filter((e) => e.subjects.includes(data.subject)).map((e) => e._id),
    ...data.memories.slice(0, data.plan.memories + data.plan.views).map((m) => m._id),
  ];
  const step = Math.max(1, Math.floor(closureIds.length / 500));
  const sample = closureIds.filter((_, i) => i % step === 0);
  let closureSampleFound = 0;
  for (const id of sample) {
    const collection = id.startsWith('evt_') ? Collections.events : Collections.memories;
    if (await db.collection<{ _id: string }>(collection).findOne({ _id: id }, { projection: { _id: 1 } }))
      closureSampleFound++;
  }
  // `_segments` as it is after the run (no merge here: the run must have left no deleted documents).
  const { deletedDocs } = await index.segments();
  return { events, memories, edges, indexDocs: await index.count(), deletedDocs, closureSampleFound };
}

/**
 * A delete on the local server binds every `_id` it matched as a parameter of one PostgreSQL statement, and a
 * statement takes at most 65 535: a larger tenant (the tombstones and transition guards of a 60 000-record
 * erasure) is deleted in `_id` ranges of this many documents.
 */
const DELETE_SLICE = 50_000;

/** Removes a bench tenant: its index, and its documents in every collection (deletes by tenant equality). */
export async function dropTenant(db: Db, services: Services, tenant: string): Promise<void> {
  await services.index.dropTenant(tenant);
  for (const name of Object.values(Collections)) {
    await deleteTenantDocs(db, name, tenant);
  }
}

async function deleteTenantDocs(db: Db, name: string, tenant: string): Promise<void> {
  const collection = db.collection<{ _id: string; tenant: string }>(name);
  // Again until nothing is left: the server may order a range differently from JavaScript's sort.
  for (let pass = 0; pass < 5; pass++) {
    const ids: unknown[] = (await collection.find({ tenant }, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
    if (ids.length === 0) return;
    if (ids.length <= DELETE_SLICE || !ids.every((id) => typeof id === 'string')) {
      await collection.deleteMany({ tenant });
      continue;
    }
    const sorted = (ids as string[]).sort();
    for (let i = 0; i < sorted.length; i += DELETE_SLICE) {
      const slice = sorted.slice(i, i + DELETE_SLICE);
      await collection.deleteMany({ tenant, _id: { $gte: slice[0]!, $lte: slice[slice.length - 1]! } });
    }
  }
  throw new Error(`${name}: documents of ${tenant} are left after five passes`);
}
