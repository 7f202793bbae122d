import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { AuditLog } from '../src/governance/audit/audit-log.port.js';
import type { CertificateStore } from '../src/governance/certificates/certificate-store.js';
import type { AssuranceClaim, CertificateInput, StoreResult } from '../src/governance/certificates/certificate.js';
import type { ErasureRequestStore } from '../src/governance/erasure/erasure-request-store.js';
import type { ErasureSetStore } from '../src/governance/erasure/erasure-set-store.js';
import type { ErasureStep, Selector } from '../src/governance/erasure/erasure-request.js';
import type { ProbeStore } from '../src/governance/erasure/probe-store.js';
import type { HoldStore } from '../src/governance/holds/hold-store.js';
import { holdCovers } from '../src/governance/holds/legal-hold.js';
import type { Notifier } from '../src/governance/notifications/notifier.js';
import { evaluatePolicy, type PolicyDocument } from '../src/governance/policy/evaluate.js';
import type { SearchService } from '../src/retrieval/search-service.js';
import type { EventStore } from '../src/substrate/events/event-store.js';
import type { Fingerprinter } from '../src/substrate/fingerprint.js';
import type { LineageStore } from '../src/substrate/lineage/lineage-store.js';
import type { MemoryStore } from '../src/substrate/memories/memory-store.js';
import { Collections, mapBounded } from '../src/substrate/mongo/collections.js';
import { compactCollections } from '../src/substrate/mongo/compaction.js';
import type { Embedder } from '../src/substrate/search/embedder.port.js';
import type { SearchIndex } from '../src/substrate/search/search-index.port.js';
import type { TombstoneSpec, TombstoneStore } from '../src/substrate/tombstones/tombstone-store.js';
import { ErrorType } from '../src/shared/errors.js';

export interface ErasureActivityDeps {
  db: Db;
  requests: ErasureRequestStore;
  sets: ErasureSetStore;
  probes: ProbeStore;
  events: EventStore;
  memories: MemoryStore;
  lineage: LineageStore;
  tombstones: TombstoneStore;
  index: SearchIndex;
  search: SearchService;
  embedder: Embedder;
  holds: HoldStore;
  audit: AuditLog;
  certificates: CertificateStore;
  notifier: Notifier;
  fingerprints: Fingerprinter;
  erasurePolicy: PolicyDocument;
  dpoEmail: string;
  operatorEmail: string;
  /** Records purged per heartbeat. */
  purgeChunk?: number;
}

/** Workflow inputs and results of these activities: ids, counts and states only. */
export interface ErasureRef {
  tenant: string;
  requestId: string;
}

export interface AuthoriseResult {
  allowed: boolean;
  toErase: number;
  held: number;
  holdIds: string[];
}

/** What the purge removed so far, per store; heartbeated with its cursor. */
interface PurgeTotals {
  memories: number;
  events: number;
  lineage: number;
  indexDocs: number;
}

const isEvent = (id: string) => id.startsWith('evt_');
/** Well inside the long profile's heartbeat timeout (30 s), also on a loaded machine. */
const HEARTBEAT_EVERY_MS = 5000;

/**
 * Heartbeats while `run` works. Closure, tombstone, compaction and verification take time in proportion to the
 * closure and run on the long profile; the heartbeat keeps a large one alive and lets a dead worker be noticed
 * within the heartbeat timeout rather than the whole start-to-close budget. These steps keep no heartbeat details.
 */
async function beating<T>(run: () => Promise<T>): Promise<T> {
  let ctx: Context | null = null;
  try {
    ctx = Context.current();
  } catch {
    // Called outside an activity: nothing to report to.
  }
  const timer = ctx ? setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS) : null;
  try {
    return await run();
  } finally {
    if (timer) clearInterval(timer);
  }
}
/**
 * Both promises settled, then the first failure rethrown: a failed attempt must not leave the other half still
 * writing while its retry starts.
 */
async function together<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
  return [first.value, second.value];
}

const PROBE_SAMPLE = 25;
/** Text and vector probes in flight: each is a few Elasticsearch round trips, mostly waiting. */
const PROBE_CONCURRENCY = 4;
/** The collections that may hold erased bytes; compacted after the purge. */
const COMPACTED = [Collections.memories, Collections.events, Collections.lineage, Collections.staging, Collections.erasureProbes];

/**
 * The six steps of the deletion closure. Every activity is idempotent (safe to retry after a crash at any
 * point) and records its step, with timestamps and counts, on the request.
 */
export function createErasureActivities(deps: ErasureActivityDeps) {
  const chunk = deps.purgeChunk ?? 500;

  async function request(ref: ErasureRef) {
    const found = await deps.requests.get(ref.tenant, ref.requestId);
    if (!found) throw ApplicationFailure.nonRetryable(`erasure request ${ref.requestId} not found`, ErrorType.NotFound);
    return found;
  }

  async function step<T extends Record<string, number>>(ref: ErasureRef, name: ErasureStep, run: () => Promise<T>): Promise<T> {
    await deps.requests.stepStarted(ref.tenant, ref.requestId, name);
    const counts = await run();
    await deps.requests.stepFinished(ref.tenant, ref.requestId, name, counts);
    return counts;
  }

  async function locateIds(tenant: string, selector: Selector): Promise<string[]> {
    if ('subjectId' in selector) {
      const [events, memories] = await Promise.all([
        deps.events.idsBySubject(tenant, selector.subjectId),
        deps.memories.idsBySubject(tenant, selector.subjectId),
      ]);
      return [...events, ...memories];
    }
    if ('memoryIds' in selector) return (await deps.memories.getMany(tenant, selector.memoryIds)).map((m) => m._id);
    if ('contentFingerprint' in selector) {
      const [events, memories] = await Promise.all([
        deps.events.idsByContentHash(tenant, selector.contentFingerprint),
        deps.memories.idsByContentHash(tenant, selector.contentFingerprint),
      ]);
      return [...events, ...memories];
    }
    if ('validTime' in selector) {
      return deps.memories.idsByTime(tenant, 'validFrom', new Date(selector.validTime.from), new Date(selector.validTime.to));
    }
    const from = new Date(selector.transactionTime.from);
    const to = new Date(selector.transactionTime.to);
    const [events, memories] = await Promise.all([
      deps.events.idsByRecordedAt(tenant, from, to),
      deps.memories.idsByTime(tenant, 'recordedAt', from, to),
    ]);
    return [...events, ...memories];
  }

  /** Subjects and namespace of each record (held-ness and collateral are decided on these). */
  async function describe(tenant: string, ids: readonly string[]) {
    const [events, memories] = await Promise.all([
      deps.events.getMany(tenant, ids.filter(isEvent)),
      deps.memories.getMany(tenant, ids.filter((id) => !isEvent(id))),
    ]);
    return [
      ...events.map((e) => ({ id: e._id, subjects: e.subjects, namespace: e.namespace })),
      ...memories.map((m) => ({ id: m._id, subjects: m.subjects, namespace: m.namespace })),
    ];
  }

  return {
    /** Step 1: the records the selector names, within the tenant only. */
    async locateTargets(ref: ErasureRef): Promise<{ located: number }> {
      return step(ref, 'locate', async () => {
        const req = await request(ref);
        if (req.state === 'received') await deps.requests.setState(ref.tenant, ref.requestId, 'running');
        if (!req.selector) throw ApplicationFailure.nonRetryable('the request has no selector left', ErrorType.Conflict);
        const ids = [...new Set(await locateIds(ref.tenant, req.selector))];
        await deps.sets.put(ref.tenant, ref.requestId, 'located', ids);
        return { located: ids.length, events: ids.filter(isEvent).length, memories: ids.filter((i) => !isEvent(i)).length };
      });
    },

    /** Step 2: everything transitively derived from the located records, by registered lineage. */
    async computeClosure(ref: ErasureRef): Promise<{ total: number; derived: number; collateral: number }> {
      return beating(() => step(ref, 'closure', async () => {
        const located = (await deps.sets.get(ref.tenant, ref.requestId, 'located')).ids;
        const walk = await deps.lineage.closure(ref.tenant, located);
        // One read of every record: lineage may name records already gone (the closure is what exists now),
        // and collateral is decided on the subjects of the located and the derived records.
        const described = new Map((await describe(ref.tenant, [...located, ...walk.derived])).map((r) => [r.id, r]));
        const derived = [...walk.derived.filter(isEvent), ...walk.derived.filter((id) => !isEvent(id))].filter((id) => described.has(id));
        const ids = [...located, ...derived];
        const locatedSubjects = new Set(located.flatMap((id) => described.get(id)?.subjects ?? []));
        const collateral = derived.filter((id) => !described.get(id)!.subjects.some((s) => locatedSubjects.has(s))).length;
        await deps.sets.put(ref.tenant, ref.requestId, 'closure', ids);
        const counts = { total: ids.length, located: located.length, derived: derived.length, collateral, rounds: walk.rounds };
        await deps.requests.update(ref.tenant, ref.requestId, { counts });
        return counts;
      }));
    },

    /** Step 3: may this requester erase on this ground (policy, default deny)? Which records are held? */
    async authoriseAndCheckHolds(ref: ErasureRef): Promise<AuthoriseResult> {
      let result: AuthoriseResult = { allowed: false, toErase: 0, held: 0, holdIds: [] };
      await step(ref, 'authorise', async () => {
        const req = await request(ref);
        const decision = evaluatePolicy(deps.erasurePolicy, {
          requesterRoles: req.requesterRoles,
          legalGround: req.legalGround,
          selectorKind: req.selectorKind,
        });
        await deps.requests.update(ref.tenant, ref.requestId, {
          policyDecision: { policyId: decision.policyId, policyVersion: decision.policyVersion, outcome: decision.outcome, ruleId: decision.ruleId },
        });
        await deps.audit.append({
          tenant: ref.tenant,
          actor: req.requester,
          action: 'erasure.authorised',
          target: ref.requestId,
          outcome: decision.outcome === 'allow' ? 'ok' : 'refused',
          details: { policyId: decision.policyId, policyVersion: decision.policyVersion, rule: decision.ruleId },
          idempotencyKey: `erasure:${ref.requestId}:authorise`,
        });
        if (decision.outcome !== 'allow') return { allowed: 0, toErase: 0, held: 0 };
        const closure = (await deps.sets.get(ref.tenant, ref.requestId, 'closure')).ids;
        const holds = await deps.holds.active(ref.tenant);
        const holdOf: Record<string, string> = {};
        if (holds.length > 0) {
          for (const record of await describe(ref.tenant, closure)) {
            const hold = holds.find((h) => holdCovers(h, record));
            if (hold) holdOf[record.id] = hold._id;
          }
        }
        const held = Object.keys(holdOf);
        const toErase = closure.filter((id) => !(id in holdOf));
        const holdIds = [...new Set(Object.values(holdOf))];
        for (const holdId of holdIds) {
          const ids = held.filter((id) => holdOf[id] === holdId);
          await deps.memories.restrict(ref.tenant, ids.filter((id) => !isEvent(id)), holdId);
          await deps.events.restrict(ref.tenant, ids.filter(isEvent), holdId);
        }
        await deps.sets.put(ref.tenant, ref.requestId, 'erase', toErase);
        await deps.sets.put(ref.tenant, ref.requestId, 'held', held, holdOf);
        await deps.requests.update(ref.tenant, ref.requestId, { holdIds });
        result = { allowed: true, toErase: toErase.length, held: held.length, holdIds };
        return { allowed: 1, toErase: toErase.length, held: held.length };
      });
      if (!result.allowed) await deps.requests.setState(ref.tenant, ref.requestId, 'rejected', 'not authorised by policy');
      return result;
    },

    /**
     * Step 4a and 5: mark deleted and write tombstones before any byte is purged, so nothing erased is served
     * or re-derived in between. Also prepares the verification probes from the records' content.
     */
    async markDeletedAndTombstone(ref: ErasureRef): Promise<{ marked: number; tombstones: number }> {
      return beating(() => step(ref, 'tombstone', async () => {
        const ids = (await deps.sets.get(ref.tenant, ref.requestId, 'erase')).ids;
        const events = await deps.events.getMany(ref.tenant, ids.filter(isEvent));
        const memories = await deps.memories.getMany(ref.tenant, ids.filter((id) => !isEvent(id)));
        const specs: TombstoneSpec[] = [
          ...events.flatMap((e): TombstoneSpec[] => [
            { kind: 'idempotency-key', parts: [e.idempotencyKey] },
            { kind: 'record', parts: [e._id] },
            ...e.subjects.map((s): TombstoneSpec => ({ kind: 'subject-content', parts: [s, e.contentHash] })),
          ]),
          ...memories.flatMap((m): TombstoneSpec[] => [
            { kind: 'record', parts: [m._id] },
            ...m.subjects.map((s): TombstoneSpec => ({ kind: 'subject-content', parts: [s, m.contentHash] })),
          ]),
        ];
        // Probes first: once the records are purged their content is gone.
        if (!(await deps.probes.get(ref.tenant, ref.requestId))) {
          const sample = [...memories.map((m) => m.content), ...events.map((e) => e.content)].slice(0, PROBE_SAMPLE);
          await deps.probes.put(ref.tenant, ref.requestId, {
            ids,
            texts: sample,
            vectors: await deps.embedder.embed(sample.slice(0, 10)),
            contentHashes: [...new Set([...memories.map((m) => m.contentHash), ...events.map((e) => e.contentHash)])],
          });
        }
        const tombstones = await deps.tombstones.write(ref.tenant, ref.requestId, specs);
        const memoryIds = memories.map((m) => m._id);
        // MongoDB and the index are marked side by side: nothing orders the two (each only narrows what is
        // served), both are idempotent, and both are done before the step ends.
        const [marked] = await together(
          (async () =>
            // The records just read start the marking; a record moved since then is caught by its transition guard.
            (await deps.memories.markDeleted(ref.tenant, memoryIds, ref.requestId, memories)) +
            (await deps.events.markDeleted(ref.tenant, events.map((e) => e._id))))(),
          memoryIds.length > 0 ? deps.index.updateStatus(ref.tenant, memoryIds, 'deleted', { refresh: true }) : Promise.resolve(null),
        );
        await deps.audit.append({
          tenant: ref.tenant,
          actor: `erasure:${ref.requestId}`,
          action: 'erasure.marked-deleted',
          target: ref.requestId,
          outcome: 'ok',
          details: { records: ids.length, tombstones: specs.length },
          idempotencyKey: `erasure:${ref.requestId}:tombstone`,
        });
        return { marked, tombstones, records: ids.length };
      }));
    },

    /** Step 4b: purge MongoDB records, lineage and index documents in chunks, heartbeating a cursor. */
    async purgeRecords(ref: ErasureRef): Promise<{ memories: number; events: number; lineage: number; indexDocs: number }> {
      return step(ref, 'purge', async () => {
        const ids = (await deps.sets.get(ref.tenant, ref.requestId, 'erase')).ids;
        const ctx = Context.current();
        // A retry resumes at the cursor its predecessor last heartbeated, with the counts up to that cursor.
        const resumed = ctx.info.heartbeatDetails as { next?: number; totals?: PurgeTotals } | undefined;
        const resumeAt = resumed?.next ?? 0;
        const totals: PurgeTotals = { memories: 0, events: 0, lineage: 0, indexDocs: 0, ...resumed?.totals };
        // Heartbeats are throttled, so a dead predecessor may have purged records past the cursor the server holds.
        // Every record of the erase set existed when it was marked deleted: on a retry, one already gone was purged
        // by this request and counts as such (lineage edges already removed cannot be counted again).
        const retried = ctx.info.attempt > 1;
        for (let at = resumeAt; at < ids.length; at += chunk) {
          const slice = ids.slice(at, at + chunk);
          const memoryIds = slice.filter((id) => !isEvent(id));
          const eventIds = slice.filter(isEvent);
          // Index first: once a record is gone from MongoDB, nothing else would point at its document.
          if (memoryIds.length > 0) {
            const index = await deps.index.purge(ref.tenant, memoryIds);
            totals.indexDocs += retried ? index.deleted + index.notFound : index.deleted;
          }
          const memories = await deps.memories.purge(ref.tenant, memoryIds);
          totals.memories += retried ? memoryIds.length : memories;
          const events = await deps.events.purge(ref.tenant, eventIds);
          totals.events += retried ? eventIds.length : events;
          totals.lineage += await deps.lineage.forget(ref.tenant, slice);
          const next = Math.min(at + chunk, ids.length);
          await deps.requests.setProgress(ref.tenant, ref.requestId, next, ids.length);
          ctx.heartbeat({ next, totals: { ...totals } });
        }
        await deps.sets.put(ref.tenant, ref.requestId, 'purged', ids);
        return { ...totals, records: ids.length };
      });
    },

    /** Step 4c: make index deletions physical; the workflow waits and retries while deleted docs remain. */
    async expungeIndex(ref: ErasureRef): Promise<{ deletedDocs: number; segments: number }> {
      return step(ref, 'expunge', async () => {
        const stats = await deps.index.expungeDeleted(ref.tenant);
        return { deletedDocs: stats.deletedDocs, segments: stats.segments };
      });
    },

    /** Step 4d: rewrite the MongoDB collections that held the records (compact, force). */
    async compactStores(ref: ErasureRef): Promise<{ collections: number }> {
      const compacted = await beating(() => compactCollections(deps.db, COMPACTED));
      await deps.requests.update(ref.tenant, ref.requestId, { compacted });
      return { collections: compacted.length };
    },

    /** Step 6a: probes by id, text and vector, directly and through the search path, then destroy them. */
    async verifyErasure(ref: ErasureRef): Promise<{ ok: boolean; found: number; deletedDocs: number }> {
      let result = { ok: false, found: 0, deletedDocs: 0 };
      await beating(() => step(ref, 'verify', async () => {
        const probes = await deps.probes.get(ref.tenant, ref.requestId);
        const erased = new Set((await deps.sets.get(ref.tenant, ref.requestId, 'purged')).ids);
        const memoryIds = [...erased].filter((id) => !isEvent(id));
        const probeResults: { kind: 'id' | 'text' | 'vector'; target: 'api' | 'mongodb' | 'elasticsearch'; checked: number; found: number }[] = [];
        const remaining = [
          ...(await deps.memories.getMany(ref.tenant, memoryIds)),
          ...(await deps.events.getMany(ref.tenant, [...erased].filter(isEvent))),
        ];
        probeResults.push({ kind: 'id', target: 'mongodb', checked: erased.size, found: remaining.length });
        const esById = memoryIds.length > 0 ? (await deps.index.probe(ref.tenant, { ids: memoryIds })).byId.length : 0;
        probeResults.push({ kind: 'id', target: 'elasticsearch', checked: memoryIds.length, found: esById });
        const byText = await mapBounded(probes?.texts ?? [], PROBE_CONCURRENCY, async (text) => {
          const direct = (await deps.index.probe(ref.tenant, { text })).byText.filter((id) => erased.has(id)).length;
          const viaApi = await deps.search.search(ref.tenant, { query: text.slice(0, 2048), k: 20, intent: 'history' });
          return { direct, api: viaApi.filter((r) => erased.has(r.memory._id)).length };
        });
        const textFound = byText.reduce((n, r) => n + r.direct, 0);
        const apiFound = byText.reduce((n, r) => n + r.api, 0);
        // The content hashes count an owner only when it is an erased record, and every erased record still in
        // MongoDB was read by id above: the owners are those of them that still carry an erased hash (one lookup
        // per hash per collection would be 2 × closure equality queries for the same answer).
        const hashes = new Set(probes?.contentHashes ?? []);
        const mongoText = remaining.filter((r) => hashes.has(r.contentHash)).length;
        const byVector = await mapBounded(probes?.vectors ?? [], PROBE_CONCURRENCY, async (vector) =>
          (await deps.index.probe(ref.tenant, { vector })).byVector.filter((id) => erased.has(id)).length,
        );
        const vectorFound = byVector.reduce((n, found) => n + found, 0);
        const texts = probes?.texts.length ?? 0;
        probeResults.push(
          { kind: 'text', target: 'elasticsearch', checked: texts, found: textFound },
          { kind: 'text', target: 'api', checked: texts, found: apiFound },
          { kind: 'text', target: 'mongodb', checked: probes?.contentHashes.length ?? 0, found: mongoText },
          { kind: 'vector', target: 'elasticsearch', checked: probes?.vectors.length ?? 0, found: vectorFound },
        );
        const stats = await deps.index.expungeDeleted(ref.tenant);
        const found = probeResults.reduce((n, p) => n + p.found, 0);
        await deps.requests.update(ref.tenant, ref.requestId, { probeResults, segmentsDeletedDocs: stats.deletedDocs });
        result = { ok: found === 0 && stats.deletedDocs === 0, found, deletedDocs: stats.deletedDocs };
        // The probes hold erased content: destroy them once they have proven the erasure, then rewrite their
        // collection. A failed verification keeps them for the operator's retry.
        if (result.ok) {
          await deps.probes.destroy(ref.tenant, ref.requestId);
          await compactCollections(deps.db, [Collections.erasureProbes]);
        }
        return { found, deletedDocs: stats.deletedDocs, probes: probeResults.length };
      }));
      return result;
    },

    /** Step 6b: the signed, chained certificate, anchored in the audit chain. */
    async issueCertificate(ref: ErasureRef & { status: 'complete' | 'partial' }): Promise<{ certificateId: string }> {
      const req = await request(ref);
      const extra = req;
      const closure = (await deps.sets.get(ref.tenant, ref.requestId, 'closure')).ids;
      const held = await deps.sets.get(ref.tenant, ref.requestId, 'held');
      const purged = req.steps.find((s) => s.step === 'purge')?.counts ?? {};
      const indexName = `${ref.tenant}`;
      const stores: StoreResult[] = [
        { store: 'mongodb', collection: Collections.memories, action: 'deleteOne+compact(force)', deleted: purged.memories ?? 0, compacted: !!extra.compacted?.includes(Collections.memories) },
        { store: 'mongodb', collection: Collections.events, action: 'deleteOne+compact(force)', deleted: purged.events ?? 0, compacted: !!extra.compacted?.includes(Collections.events) },
        { store: 'mongodb', collection: Collections.lineage, action: 'deleteOne+compact(force)', deleted: purged.lineage ?? 0, compacted: !!extra.compacted?.includes(Collections.lineage) },
        {
          store: 'elasticsearch',
          index: `memories:${indexName}`,
          action: 'bulk delete+forcemerge(only_expunge_deletes)+flush',
          deleted: purged.indexDocs ?? 0,
          deletedDocsAfter: extra.segmentsDeletedDocs ?? 0,
        },
      ];
      const holdIds = [...new Set(Object.values(held.holdOf))];
      const input: CertificateInput = {
        requestId: ref.requestId,
        tenant: ref.tenant,
        selectorHash: req.selectorHash,
        requester: req.requester,
        legalGround: req.legalGround,
        policy: extra.policyDecision ?? { policyId: deps.erasurePolicy.id, policyVersion: deps.erasurePolicy.version, outcome: 'allow', ruleId: 'unknown' },
        holds: holdIds.map((holdId) => {
          const ids = held.ids.filter((id) => held.holdOf[id] === holdId);
          return { holdId, exemptedCount: ids.length, exemptedIds: ids };
        }),
        status: ref.status,
        closure: {
          located: req.counts.located ?? 0,
          derived: req.counts.derived ?? 0,
          collateral: req.counts.collateral ?? 0,
          total: closure.length,
          ids: closure,
        },
        stores,
        probes: extra.probeResults ?? [],
        steps: req.steps
          .filter((s) => s.finishedAt)
          .map((s) => ({ step: s.step, startedAt: s.startedAt.toISOString(), finishedAt: s.finishedAt!.toISOString(), counts: s.counts })),
        assurance: assuranceClaims(),
      };
      const certificate = await deps.certificates.issue(input);
      await deps.requests.addCertificate(ref.tenant, ref.requestId, certificate.certificateId);
      return { certificateId: certificate.certificateId };
    },

    /** Records whose hold was released join the next round; those still held stay. */
    async releaseHeld(ref: ErasureRef): Promise<{ released: number; stillHeld: number }> {
      const held = await deps.sets.get(ref.tenant, ref.requestId, 'held');
      const active = new Set((await deps.holds.active(ref.tenant)).map((h) => h._id));
      const released = held.ids.filter((id) => !active.has(held.holdOf[id]!));
      const still = held.ids.filter((id) => active.has(held.holdOf[id]!));
      const stillOf = Object.fromEntries(still.map((id) => [id, held.holdOf[id]!]));
      await deps.sets.put(ref.tenant, ref.requestId, 'erase', released);
      await deps.sets.put(ref.tenant, ref.requestId, 'held', still, stillOf);
      return { released: released.length, stillHeld: still.length };
    },

    async setErasureState(ref: ErasureRef & { state: 'running' | 'partial' | 'completed'; note?: string }): Promise<void> {
      await deps.requests.setState(ref.tenant, ref.requestId, ref.state, ref.note ?? null);
      if (ref.state === 'completed') {
        // The request keeps only the selector's keyed hash once the erasure is done.
        await deps.requests.update(ref.tenant, ref.requestId, { selector: null });
        await deps.sets.drop(ref.tenant, ref.requestId);
      }
    },

    /** A step kept failing: needs-operator, audited, the operator e-mailed with the runbook to follow. */
    async escalateToOperator(ref: ErasureRef & { step: string; errorType: string }): Promise<void> {
      await deps.requests.setState(ref.tenant, ref.requestId, 'needs-operator', `step ${ref.step} failed (${ref.errorType})`);
      await deps.audit.append({
        tenant: ref.tenant,
        actor: `erasure:${ref.requestId}`,
        action: 'erasure.needs-operator',
        target: ref.requestId,
        outcome: 'error',
        details: { step: ref.step, errorType: ref.errorType },
      });
      await deps.notifier.send({
        to: deps.operatorEmail,
        subject: `Lethe: erasure ${ref.requestId} needs an operator`,
        text: `Erasure request ${ref.requestId} (tenant ${ref.tenant}) is stuck at step "${ref.step}" (${ref.errorType}).\nFollow runbooks/stuck-erasure.md, then signal the workflow to retry.`,
      });
    },

    /** E-mails the DPO: ids, states and counts only. */
    async notifyDpo(ref: ErasureRef & { kind: 'completed' | 'partial' | 'rejected' | 'deadline-approaching' | 'deadline-passed' | 'extended'; certificateId?: string; dueAt?: string }): Promise<void> {
      const lines: Record<typeof ref.kind, string> = {
        completed: `Erasure request ${ref.requestId} is complete. Certificate: ${ref.certificateId ?? '-'}.`,
        partial: `Erasure request ${ref.requestId} is partial: records under legal hold were kept with restricted access. Certificate: ${ref.certificateId ?? '-'}. They will be erased when the hold is released.`,
        rejected: `Erasure request ${ref.requestId} was not authorised by policy.`,
        'deadline-approaching': `Erasure request ${ref.requestId} is due on ${ref.dueAt ?? '?'} and is not complete.`,
        'deadline-passed': `Erasure request ${ref.requestId} passed its due date (${ref.dueAt ?? '?'}) without completing.`,
        extended: `Erasure request ${ref.requestId} was extended; it is now due on ${ref.dueAt ?? '?'}.`,
      };
      await deps.notifier.send({
        to: deps.dpoEmail,
        subject: `Lethe: erasure ${ref.requestId} — ${ref.kind}`,
        text: `${lines[ref.kind]}\nTenant: ${ref.tenant}.`,
      });
    },

    /** Records an extension of the GDPR deadline (at most two more months, with a reason). */
    async recordExtension(ref: ErasureRef & { months: number; reasonHash: string; dueAt: string }): Promise<void> {
      const req = await request(ref);
      await deps.requests.update(ref.tenant, ref.requestId, {
        extensionMonths: req.extensionMonths + ref.months,
        dueAt: new Date(ref.dueAt),
      });
      await deps.audit.append({
        tenant: ref.tenant,
        actor: req.requester,
        action: 'erasure.extended',
        target: ref.requestId,
        outcome: 'ok',
        details: { months: ref.months, dueAt: ref.dueAt, reasonHash: ref.reasonHash },
        idempotencyKey: `erasure:${ref.requestId}:extend:${ref.dueAt}`,
      });
    },
  };
}

function assuranceClaims(): AssuranceClaim[] {
  return [
    { place: 'api:search', level: 'L1', statement: 'no id, text or vector probe reaches an erased record through the governed search path' },
    { place: 'mongodb:memories,events,lineage', level: 'L2', statement: 'records deleted; collections compacted with force (table rewrite)' },
    { place: 'elasticsearch:segments', level: 'L2', statement: 'documents deleted by id; force merge with only_expunge_deletes and flush; _segments reports 0 deleted docs' },
    { place: 'mongodb:verification-probes', level: 'L2', statement: 'probe samples destroyed after verification; collection compacted' },
    {
      place: 'mongodb:oplog+journal (postgresql:wal on the local stack)',
      level: 'L3',
      statement: 'write-ahead records of the deleted documents remain until recycled',
      lapses: { condition: 'WAL/oplog segments recycled after the next checkpoints (bounded by max_wal_size / oplog window)' },
    },
    {
      place: 'backups and elasticsearch:snapshots',
      level: 'L3',
      statement: 'copies taken before the erasure keep the records; a restore re-applies tombstones and certificates first',
      lapses: { condition: 'backup and snapshot retention period expires (runbooks/restore-backup.md)' },
    },
    {
      place: 'temporal:history',
      level: 'L3',
      statement: 'workflow histories hold ids, keyed hashes and counts only, never content',
      lapses: { condition: 'namespace history retention period expires' },
    },
  ];
}
