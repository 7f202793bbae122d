/**
 * One arm of `bench/poisoning.bench.ts`: the plan's batches run round by round, each batch as the ingestion workflow
 * runs it (`workflows/ingest-batch.workflow.ts`), in-process: `admitBatch` over the real stores (deps as the
 * ingestion activities get them, with `defences` on or off), then the dispute activities' `detectContradictions` on
 * the batch's `active` memories (deps as `createAllActivities` builds them; no dispute review workflow is started),
 * then every memory of the batch indexed (`indexUnlessErased`, refresh=wait_for). Then every question asked through
 * the governed retrieval service, as an agent reading for customer support; each item served is noted with whether
 * it carried a dispute marker.
 */
import { randomUUID } from 'node:crypto';
import { createDisputeActivities } from '../../activities/dispute.activities.js';
import type { Config } from '../../src/config/config.js';
import type { Services } from '../../app/services.js';
import { requireReader } from '../../app/api/routes/read-access.js';
import { admitBatch, type AdmissionDeps, type StagedBatch } from '../../src/ingestion/admit-batch.js';
import { WriteBatchSchema } from '../../src/ingestion/write-schemas.js';
import { RetrieveRequestSchema, type RetrievedItem } from '../../src/retrieval/retrieval-service.js';
import { mapBounded } from '../../src/substrate/mongo/collections.js';
import { indexUnlessErased } from '../../src/substrate/search/index-unless-erased.js';
import { admissionDepsOf, disputeDepsOf } from '../../app/worker/activities.js';
import { PURPOSE, READER, ROUNDS, type PlannedBatch, type PoisoningPlan } from './poisoning-plan.js';

/** Batches of one round run at once (each touches one subject, so none races another's flapping or dispute check). */
const CONCURRENCY = 4;
/** Items a question asks for: the API's default. */
export const K = 10;
/** Open disputes read back at the end of an arm (far more than the plan can open). */
const MAX_DISPUTES = 100_000;

export interface WriteOutcome {
  key: string;
  id: string;
  round: number;
  /** The status it was admitted in, or `refused` when its batch was refused. */
  status: string;
  /** Its status once its batch's contradiction detection ran (`disputed` when that opened a dispute over it). */
  afterDetect: string;
  /** Its status when the questions were asked. */
  finalStatus: string;
  /** Plan keys of the records it is in open dispute with when the questions were asked. */
  disputedWith: string[];
  quarantinedFor: string[];
  taint: string[];
  refusal: string | null;
  /** The derivation audit's label and what its policy says to do with it (in record mode: not done). */
  derivation: { label: string; outcome: string } | null;
  /** Since the arm started: its batch's admission began and ended, and its contradiction detection ended (ms). */
  startedMs: number;
  endedMs: number;
  detectedMs: number;
}

export interface ServedItem {
  /** Plan key (or the record id when the plan does not know it). */
  key: string;
  /** Served with a dispute marker: the record's `status` is `disputed`, or the item lists open `disputes`. */
  disputed: boolean;
}

export interface Answer {
  question: string;
  /** The attempt asked about, or null for an honest subject's question. */
  attempt: string | null;
  subject: string;
  attribute: string;
  /** The items served, in rank order. */
  served: ServedItem[];
  tainted: number;
  /** Candidates the retrieval judged and refused (not served). */
  refused: number;
}

export interface ArmResult {
  tenant: string;
  defences: boolean;
  writes: Map<string, WriteOutcome>;
  answers: Answer[];
  batches: number;
  refusedBatches: number;
  /** Disputes opened and records superseded by contradiction detection. */
  disputesOpened: number;
  superseded: number;
  /** Wall time of the rounds (admission, detection and indexing of every batch), then summed over batches. */
  roundsMs: number;
  admitMs: number;
  detectMs: number;
  indexMs: number;
  askMs: number;
}

function admissionDeps(services: Services, defences: boolean): AdmissionDeps {
  return { ...admissionDepsOf(services), defences };
}

function disputeActivities(services: Services, smtp: Pick<Config['smtp'], 'reviewersEmail' | 'escalationEmail'>) {
  return createDisputeActivities(disputeDepsOf(services, smtp));
}

const hasDisputeMarker = (item: RetrievedItem) =>
  item.memory.record.status === 'disputed' || (item.disputes?.length ?? 0) > 0;

export async function runArm(
  services: Services,
  smtp: Pick<Config['smtp'], 'reviewersEmail' | 'escalationEmail'>,
  tenant: string,
  plan: PoisoningPlan,
  defences: boolean,
  progress: (message: string) => void,
): Promise<ArmResult> {
  const admission = admissionDeps(services, defences);
  const { detectContradictions } = disputeActivities(services, smtp);
  const memoryIds = new Map([...plan.memories.keys()].map((key) => [key, `mem_${randomUUID()}`]));
  const keyOf = new Map([...memoryIds].map(([key, id]) => [id, key]));
  const eventIds = new Map<string, string>();
  const writes = new Map<string, WriteOutcome>();
  const resolve = (ref: string): string => {
    if (ref.startsWith('@event:')) return eventIds.get(ref.slice(7)) ?? `evt_never_recorded_${ref.slice(7)}`;
    if (ref.startsWith('@memory:')) return memoryIds.get(ref.slice(8))!;
    return ref;
  };
  const staged = (b: PlannedBatch): StagedBatch => {
    const parsed = WriteBatchSchema.parse({
      events: b.events.map((e) => e.input),
      memories: b.memories.map((m) => ({
        ...m.input,
        provenance: {
          ...m.input.provenance,
          eventIds: m.input.provenance.eventIds.map(resolve),
          parentIds: m.input.provenance.parentIds.map(resolve),
        },
      })),
    });
    return {
      roles: ['agent'],
      events: parsed.events,
      memories: parsed.memories.map((m, i) => ({ ...m, id: memoryIds.get(b.memories[i]!.key)! })),
    };
  };

  const t0 = performance.now();
  let admitMs = 0;
  let detectMs = 0;
  let indexMs = 0;
  let refusedBatches = 0;
  let disputesOpened = 0;
  let superseded = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const batches = plan.batches.filter((b) => b.round === round);
    const counts = await mapBounded(batches, CONCURRENCY, async (b) => {
      const body = staged(b);
      const startedMs = performance.now() - t0;
      const result = await admitBatch(admission, tenant, b.principal, `stg_${randomUUID()}`, body);
      const endedMs = performance.now() - t0;
      admitMs += endedMs - startedMs;
      if (result.refused) {
        refusedBatches++;
        for (const m of b.memories) {
          writes.set(m.key, {
            key: m.key,
            id: memoryIds.get(m.key)!,
            round,
            status: 'refused',
            afterDetect: 'refused',
            finalStatus: 'refused',
            disputedWith: [],
            quarantinedFor: [],
            taint: [],
            refusal: `${result.refused.type} (${result.refused.field})`,
            derivation: null,
            startedMs,
            endedMs,
            detectedMs: endedMs,
          });
        }
        return { memories: 0, disputes: 0 };
      }
      b.events.forEach((e, i) => eventIds.set(e.key, result.events[i]!.id));
      // As the ingestion workflow: contradictions first (on what became active), so that a contradicted write is
      // never searchable as plainly active; then every memory of the batch indexed.
      const active = result.memories.filter((m) => m.status === 'active').map((m) => m.id);
      const found = active.length > 0 ? await detectContradictions({ tenant, ids: active }) : null;
      const detectedMs = performance.now() - t0;
      detectMs += detectedMs - endedMs;
      disputesOpened += found?.disputes.length ?? 0;
      superseded += found?.superseded ?? 0;
      const ids = result.memories.map((m) => m.id);
      const { indexed } = await indexUnlessErased(services.index, services.memories, tenant, ids);
      if (indexed !== ids.length) throw new Error(`round ${round}: indexed ${indexed} of ${ids.length}`);
      indexMs += performance.now() - t0 - detectedMs;

      const admitted = new Map(result.memories.map((m) => [m.id, m.status]));
      const records = new Map((await services.memories.getMany(tenant, ids)).map((r) => [r._id, r]));
      for (const m of b.memories) {
        const id = memoryIds.get(m.key)!;
        const r = records.get(id);
        writes.set(m.key, {
          key: m.key,
          id,
          round,
          status: admitted.get(id) ?? 'missing',
          afterDetect: r?.status ?? 'missing',
          finalStatus: r?.status ?? 'missing',
          disputedWith: [],
          quarantinedFor: r?.quarantinedFor ?? [],
          taint: r?.taint ?? [],
          refusal: null,
          derivation: r?.derivation ? { label: r.derivation.label, outcome: r.derivation.policy.outcome } : null,
          startedMs,
          endedMs,
          detectedMs,
        });
      }
      return { memories: ids.length, disputes: found?.disputes.length ?? 0 };
    });
    const admittedN = counts.reduce((n, c) => n + c.memories, 0);
    const disputesN = counts.reduce((n, c) => n + c.disputes, 0);
    progress(
      `  round ${round}: ${batches.length} batches, ${admittedN} memories admitted and indexed, ${disputesN} disputes opened`,
    );
  }
  const roundsMs = performance.now() - t0;

  // Where every record stands when the questions are asked, and who it is in open dispute with.
  const finals = new Map(
    (
      await services.memories.getMany(
        tenant,
        [...writes.values()].map((w) => w.id),
      )
    ).map((r) => [r._id, r.status]),
  );
  const rivals = new Map<string, string[]>();
  for (const d of await services.disputes.listOpen(tenant, MAX_DISPUTES)) {
    for (const id of d.memoryIds) {
      const others = d.memoryIds.filter((o) => o !== id).map((o) => keyOf.get(o) ?? o);
      rivals.set(id, [...(rivals.get(id) ?? []), ...others]);
    }
  }
  for (const w of writes.values()) {
    if (w.status === 'refused') continue;
    w.finalStatus = finals.get(w.id) ?? 'missing';
    w.disputedWith = rivals.get(w.id) ?? [];
  }

  const askStarted = performance.now();
  const asked = [
    ...plan.attempts.flatMap((a) =>
      a.questions.map((question) => ({ question, attempt: a.id, subject: a.subject, attribute: a.attribute })),
    ),
    ...plan.honestQuestions.map((q) => ({ ...q, attempt: null })),
  ];
  const principal = { id: READER, tenant, roles: ['agent' as const] };
  const answers = await mapBounded(asked, CONCURRENCY, async (q): Promise<Answer> => {
    const reader = await requireReader(services, principal, { purpose: PURPOSE, intent: 'current' }, 'retrieve');
    const request = RetrieveRequestSchema.parse({ query: q.question, purpose: PURPOSE, intent: 'current', k: K });
    const result = await services.retrieval.retrieve(tenant, request, reader);
    return {
      ...q,
      served: result.items.map((i) => ({
        key: keyOf.get(i.memory.record._id) ?? i.memory.record._id,
        disputed: hasDisputeMarker(i),
      })),
      tainted: result.counts.tainted,
      refused: result.counts.refused,
    };
  });
  return {
    tenant,
    defences,
    writes,
    answers,
    batches: plan.batches.length,
    refusedBatches,
    disputesOpened,
    superseded,
    roundsMs,
    admitMs,
    detectMs,
    indexMs,
    askMs: performance.now() - askStarted,
  };
}
