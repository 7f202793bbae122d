/**
 * Lethe through its real services on the local stack, in-process, as `bench/poisoning.bench.ts` runs it
 * (bench/lib/poisoning-run.ts): each write is admitted as the ingestion workflow admits a batch (`admitBatch`, the
 * derivation audit as configured), its contradictions and corrections found (`detectContradictions`), and indexed
 * (`indexUnlessErased`, refresh=wait_for); each question goes through the governed retrieval service as an agent
 * reading for customer support; an erasure is filed through the erasure gateway and carried by the erasure workflow
 * on a worker in this process (`bench/lib/erasure-lethe.ts`).
 *
 * A script event becomes an event and a memory that states it verbatim (attribute: the fact's key). Events about the
 * same fact share an external id, so a later one is a correction of the earlier one: contradiction detection then
 * supersedes the earlier memory and closes its valid time where the new one starts. A derived view (a digest)
 * becomes a memory whose parents are the memories it was derived from.
 */
import { randomUUID } from 'node:crypto';
import type { NativeConnection, WorkflowBundleOption } from '@temporalio/worker';
import { createDisputeActivities } from '../../activities/dispute.activities.js';
import { requireReader } from '../../app/api/routes/read-access.js';
import type { Runtime } from '../../app/runtime.js';
import type { Services } from '../../app/services.js';
import { admissionDepsOf, disputeDepsOf } from '../../app/worker/activities.js';
import { benchName } from '../../bench/lib/bench-run.js';
import { runLethe } from '../../bench/lib/erasure-lethe.js';
import { PURPOSE } from '../../bench/lib/poisoning-plan.js';
import { admitBatch } from '../../src/ingestion/admit-batch.js';
import { WriteBatchSchema } from '../../src/ingestion/write-schemas.js';
import { RetrieveRequestSchema } from '../../src/retrieval/retrieval-service.js';
import { Collections } from '../../src/substrate/mongo/collections.js';
import { indexUnlessErased } from '../../src/substrate/search/index-unless-erased.js';
import { tenantIndexNames } from '../../src/substrate/search/index-layout.js';
import { canariesIn, type Context } from '../metrics.js';
import type { ScriptEvent } from '../workloads/script.js';
import type { Ask, ErasureProbe, EvalSystem } from './system.js';

export interface LetheEvalOptions {
  /** The row's name, and a label that keeps its tenants apart from another Lethe row's. */
  name: string;
  label: string;
  k: number;
  /** The erasure worker's task queue: the one the services start workflows on. */
  erasure: {
    taskQueue: string;
    connection: NativeConnection;
    workflowBundle: WorkflowBundleOption;
    progress: (m: string) => void;
  };
}

const externalId = (e: ScriptEvent) => (e.fact ? `fact-${e.fact.key}` : e.id).replace(/\s+/g, '-');

export function createLetheSystem(runtime: Runtime, services: Services, options: LetheEvalOptions): EvalSystem {
  const admission = { ...admissionDepsOf(services), defences: true };
  const smtp = runtime.config.smtp;
  const { detectContradictions } = createDisputeActivities(disputeDepsOf(services, smtp));
  const tenantOf = new Map<string, string>();
  const tenant = (t: string) => {
    if (!tenantOf.has(t)) tenantOf.set(t, benchName(`eval-${options.label}-${t}`));
    return tenantOf.get(t)!;
  };
  /** Script event id → the Lethe event and memory ids it became, and back. */
  const memoryOf = new Map<string, string>();
  const eventOf = new Map<string, string>();
  const scriptOf = new Map<string, ScriptEvent>();

  /** Memories the derivation audit refused (the rest of their batch admitted again without them), with why. */
  const refusals: { eventId: string; message: string }[] = [];

  const admit = async (events: readonly ScriptEvent[]) => {
    const t = tenant(events[0]!.tenant);
    const stated = events.filter((e) => !e.derivedFrom);
    let kept = [...events];
    for (;;) {
      const parsed = WriteBatchSchema.parse({
        events: stated.map((e) => ({
          source: 'eval',
          externalId: externalId(e),
          namespace: 'eval',
          subjects: e.subjects,
          content: e.text,
          occurredAt: e.at.toISOString(),
          scope: e.scope,
        })),
        memories: kept.map((e) => memoryInput(e, stated.indexOf(e))),
      });
      const ids = kept.map(() => `mem_${randomUUID()}`);
      const result = await admitBatch(admission, t, events[0]!.principal, `stg_${randomUUID()}`, {
        roles: ['agent'],
        events: parsed.events,
        memories: parsed.memories.map((m, i) => ({ ...m, id: ids[i]! })),
      });
      const refusedAt = result.refused ? /^memories\.(\d+)\./.exec(result.refused.field) : null;
      if (result.refused && refusedAt && result.refused.policy) {
        // The derivation audit refused one memory: a client drops it and writes the rest again.
        const index = Number(refusedAt[1]);
        refusals.push({ eventId: kept[index]!.id, message: result.refused.message });
        kept = kept.filter((_, i) => i !== index);
        continue;
      }
      if (result.refused) throw new Error(`Lethe refused a batch: ${result.refused.type} (${result.refused.field})`);
      stated.forEach((e, i) => {
        eventOf.set(e.id, result.events[i]!.id);
        scriptOf.set(result.events[i]!.id, e);
      });
      kept.forEach((e, i) => {
        memoryOf.set(e.id, ids[i]!);
        scriptOf.set(ids[i]!, e);
      });
      const active = result.memories.filter((m) => m.status === 'active').map((m) => m.id);
      if (active.length > 0) await detectContradictions({ tenant: t, ids: active });
      const { indexed } = await indexUnlessErased(services.index, services.memories, t, ids);
      if (indexed !== ids.length) throw new Error(`Lethe indexed ${indexed} of ${ids.length} memories`);
      return;
    }
  };

  const memoryInput = (e: ScriptEvent, eventIndex: number) => ({
    namespace: 'eval',
    subjects: e.subjects,
    kind: e.derivedFrom ? 'view' : e.fact ? 'fact' : 'note',
    ...(e.fact ? { attribute: e.fact.key } : {}),
    content: e.text,
    validFrom: e.at.toISOString(),
    purpose: PURPOSE,
    sensitivity: 'internal',
    jurisdiction: 'DE',
    trustTier: 1,
    confidence: 0.9,
    scope: e.scope,
    provenance: {
      eventIds: e.derivedFrom ? [] : [`#${eventIndex}`],
      // A parent the audit refused was never written: the view then cites what is left of its sources.
      parentIds: (e.derivedFrom ?? []).flatMap((id) => memoryOf.get(id) ?? []),
      derivationRule: e.derivedFrom ? 'eval-digest' : 'eval-verbatim',
    },
  });

  const ask = async (q: Ask, budgetTokens: number): Promise<Context> => {
    const t = tenant(q.tenant);
    const started = performance.now();
    const principal = { id: q.principal, tenant: t, roles: ['agent' as const] };
    const reader = await requireReader(
      services,
      principal,
      { purpose: PURPOSE, intent: q.intent, ...(q.asOf ? { asOf: q.asOf } : {}) },
      'retrieve',
    );
    const request = RetrieveRequestSchema.parse({
      query: q.text,
      purpose: PURPOSE,
      intent: q.intent,
      ...(q.asOf ? { asOf: q.asOf.toISOString() } : {}),
      k: options.k,
      budgetTokens,
    });
    const result = await services.retrieval.retrieve(t, request, reader);
    const ms = performance.now() - started;
    const at = (q.asOf ?? q.askedAt).getTime();
    return {
      items: result.items.map((i) => {
        const r = i.memory.record;
        const inForce = r.validFrom.getTime() <= at && (r.validTo === null || at < r.validTo.getTime());
        return { eventId: scriptOf.get(r._id)?.id ?? r._id, text: r.content, notInForce: !inForce };
      }),
      tokens: result.budget.used,
      ms,
    };
  };

  return {
    name: options.name,
    refusals,
    async write(events) {
      // One admission per writer (a batch is admitted under one principal), stated events before derived views.
      const groups = new Map<string, ScriptEvent[]>();
      for (const e of events) {
        const key = `${e.tenant}\u0000${e.principal}\u0000${e.derivedFrom ? 1 : 0}`;
        groups.set(key, [...(groups.get(key) ?? []), e]);
      }
      for (const [key, group] of [...groups].sort(([a], [b]) => Number(a.endsWith('1')) - Number(b.endsWith('1'))))
        if (key) await admit(group);
    },
    ask,
    async erase(scriptTenant, subject) {
      const run = await runLethe(runtime, services, tenant(scriptTenant), subject, {
        taskQueue: options.erasure.taskQueue,
        connection: options.erasure.connection,
        workflowBundle: options.erasure.workflowBundle,
        maxAttempt: 3,
        capMs: 10 * 60_000,
        progress: options.erasure.progress,
      });
      if (run.outcome !== 'completed') throw new Error(`Lethe's erasure did not complete: ${run.reason}`);
    },
    async probe(scriptTenant, canaries, question): Promise<ErasureProbe> {
      const t = tenant(scriptTenant);
      const carrying = [...new Set(scriptOf.values())].filter((e) => e.canary && canaries.includes(e.canary));
      const memoryIds = carrying.flatMap((e) => memoryOf.get(e.id) ?? []);
      const eventIds = carrying.flatMap((e) => eventOf.get(e.id) ?? []);
      const inStore = [
        ...(await runtime.db
          .collection<{ _id: string }>(Collections.memories)
          .find({ tenant: t, _id: { $in: memoryIds } }, { projection: { _id: 1 } })
          .toArray()),
        ...(await runtime.db
          .collection<{ _id: string }>(Collections.events)
          .find({ tenant: t, _id: { $in: eventIds } }, { projection: { _id: 1 } })
          .toArray()),
      ].map((d) => scriptOf.get(d._id)?.canary ?? '');
      const { alias } = tenantIndexNames(runtime.config.elasticsearch.indexPrefix, t);
      const hits = await runtime.es.search({
        index: alias,
        size: memoryIds.length + canaries.length,
        _source: false,
        query: {
          bool: {
            should: [{ ids: { values: memoryIds } }, ...canaries.map((c) => ({ match_phrase: { content: c } }))],
          },
        },
      });
      const inIndex = hits.hits.hits.map((h) => scriptOf.get(h._id ?? '')?.canary ?? '');
      const context = await ask(question, 100_000);
      return {
        store: canariesIn(inStore, canaries),
        index: canariesIn(inIndex, canaries),
        context: canariesIn(
          context.items.map((i) => i.text),
          canaries,
        ),
      };
    },
    async storedBytes() {
      try {
        const stats = await runtime.db.stats();
        const index = await runtime.es.indices.stats({
          index: [...tenantOf.values()].map((t) => tenantIndexNames(runtime.config.elasticsearch.indexPrefix, t).alias),
          metric: 'store',
        });
        const dataSize = Number(stats.dataSize ?? NaN) + Number(stats.indexSize ?? 0);
        if (!Number.isFinite(dataSize)) return { reason: 'the database reports no dataSize' };
        return dataSize + (index._all.primaries?.store?.size_in_bytes ?? 0);
      } catch (error) {
        return { reason: `stats not available: ${(error as Error).message.slice(0, 80)}` };
      }
    },
    async close() {
      await Promise.allSettled([...tenantOf.values()].map((t) => services.index.dropTenant(t)));
    },
  };
}
