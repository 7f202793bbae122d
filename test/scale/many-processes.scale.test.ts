/**
 * Lethe at scale as a deployment runs it: worker and API processes of their own on one task queue, over the real
 * local stack, with many data subjects in a few tenants of the test's own.
 *
 * Two phases, on tenants of the same size so that their erasures cost the same:
 * - one worker: a quarter of the tenants have their memories admitted and their erasures filed and completed;
 * - three workers: the same for the other tenants, while one worker is SIGKILLed (a replacement is started at once,
 *   as an orchestrator would) and one API is stopped with SIGTERM and started again on the same port.
 * In both, retrieval loops run against both APIs while the erasures run. Every subject's records are about it alone
 * and every sentence names it, so the requests are independent: no two reach the same record. Filings fail over to
 * the other API with the same request key, so a retried filing never makes a second request.
 *
 * Then: every request completed exactly once (one certificate, each audit entry once, one workflow run), the
 * certificates and audit chains verify as an auditor verifies them, nothing of an erased subject is left in the
 * store, the index or the search, every other record is, and no retrieval got a 5xx outside the restart window.
 * Throughput with one and with three workers is printed side by side, never asserted.
 *
 * Sizes: LETHE_SCALE_MEMORIES (20 000), LETHE_SCALE_ERASURES (200), LETHE_SCALE_TENANTS (20), and the rest in
 * scale-data.ts.
 */
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../app/services.js';
import type { Runtime } from '../../app/runtime.js';
import { erasureWorkflowId } from '../../src/temporal/erasure-gateway.js';
import { verifyCertificatesJsonl } from '../../src/governance/certificates/certificate-verify.js';
import { Collections } from '../../src/substrate/mongo/collections.js';
import type { AuditEntry } from '../../src/governance/audit/audit-log.port.js';
import type { SignedCheckpoint } from '../../src/governance/audit/log-tree/checkpoint-store.js';
import { auditLeaf } from '../../src/governance/audit/log-tree/log-tree-store.js';
import { verifyConsistency, verifyInclusion } from '../../src/governance/audit/log-tree/merkle-verify.js';
import { freePort } from '../../stack/processes.js';
import { TEST_INDEX_SETTINGS, uniqueTenant } from '../support/app.js';
import { testRuntime, uniqueId } from '../support/harness.js';
import type { WorkerExit } from '../support/worker-process.js';
import { scalePlan, spreadPick, subjectId, subjectName } from './scale-data.js';
import { Scenario, newPhase, type FiledRequest, type PhaseReport, type TenantData } from './scenario.js';
import { throughputTable } from './report.js';
import { inWindow, outcomes, type CallRecord, type Window } from './traffic.js';

const plan = scalePlan();
const SUBJECTS_PER_TENANT = plan.memories / plan.tenants / plan.memoriesPerSubject;
const ERASURES_PER_TENANT = plan.erasures / plan.tenants;
/** How long a run may still take after its request reads completed: twice the notification's start-to-close. */
const RUN_END_GRACE_MS = 2 * 60_000;

interface AuditTally {
  entries: number;
  /** Idempotency keys written more than once. */
  repeatedKeys: number;
  /** Per request: its `erasure.*` actions and how often each was written. */
  byRequest: Map<string, Record<string, number>>;
  /** Per memory: how often its `memory.created` was written. */
  created: Map<string, number>;
}

describe(`${plan.memories} memories and ${plan.erasures} erasures through 3 worker and 2 API processes`, () => {
  const taskQueue = uniqueId('tq');
  const tenants: TenantData[] = Array.from({ length: plan.tenants }, (_, i) => ({
    tenant: uniqueTenant(),
    writer: `agent-writer-${i}`,
    subjects: SUBJECTS_PER_TENANT,
    memoryIds: new Map(),
    eventIds: new Map(),
    statuses: new Map(),
    erased: spreadPick(SUBJECTS_PER_TENANT, ERASURES_PER_TENANT),
  }));
  const oneWorkerTenants = tenants.slice(0, plan.oneWorkerTenants);
  const threeWorkerTenants = tenants.slice(plan.oneWorkerTenants);
  const phases: PhaseReport[] = [];
  const chaos: {
    filedAtRestart?: number;
    apiExit?: WorkerExit;
    window?: Window;
    completedAtKill?: number;
    workerExit?: WorkerExit;
  } = {};
  let runtime: Runtime;
  let services: Services;
  let scenario: Scenario;
  let runStartedAt = 0;
  let audits: Promise<Map<string, AuditTally>> | undefined;

  const dpo = (t: TenantData) => scenario.token(t.tenant, ['dpo'], 'dpo-scale');
  const auditor = (t: TenantData) => scenario.token(t.tenant, ['auditor'], 'auditor-scale');
  const erasedMemoryIds = (t: TenantData) => t.erased.flatMap((s) => t.memoryIds.get(s) ?? []);
  const erasedEventIds = (t: TenantData) => t.erased.flatMap((s) => t.eventIds.get(s) ?? []);

  /** Admits the tenants' memories, then files their erasures with retrieval loops running, and waits for them. */
  async function runPhase(
    report: PhaseReport,
    phaseTenants: TenantData[],
    readFrom: TenantData[],
    hooks: { onFiled?: (count: number) => void; onPoll?: (completed: number, total: number) => Promise<void> } = {},
  ): Promise<void> {
    phases.push(report);
    const stopSampling = scenario.sampleLoad(report);
    try {
      await scenario.admit(phaseTenants, report);
      const readers = scenario.startReaders(() => readFrom);
      try {
        const filed = await scenario.file(phaseTenants, report, hooks.onFiled);
        await scenario.settle(
          filed,
          report,
          (completed) => hooks.onPoll?.(completed, filed.length) ?? Promise.resolve(),
        );
      } finally {
        await readers.stop();
      }
    } finally {
      stopSampling();
      report.endedAt = new Date();
    }
  }

  /** Each tenant's audit chain read once: what the exactly-once checks count. */
  function auditTallies(): Promise<Map<string, AuditTally>> {
    audits ??= (async () => {
      const out = new Map<string, AuditTally>();
      for (const t of tenants) {
        const tally: AuditTally = { entries: 0, repeatedKeys: 0, byRequest: new Map(), created: new Map() };
        const keys = new Set<string>();
        const requestIds = new Set(scenario.filed.filter((r) => r.tenant === t.tenant).map((r) => r.id));
        for await (const entry of services.audit.entries(t.tenant)) {
          tally.entries++;
          if (keys.has(entry.idempotencyKey)) tally.repeatedKeys++;
          keys.add(entry.idempotencyKey);
          if (entry.action === 'memory.created' && entry.target)
            tally.created.set(entry.target, (tally.created.get(entry.target) ?? 0) + 1);
          const requestId =
            entry.target && requestIds.has(entry.target)
              ? entry.target
              : (entry.details as { requestId?: unknown } | null)?.requestId;
          if (entry.action.startsWith('erasure.') && typeof requestId === 'string' && requestIds.has(requestId)) {
            const actions = tally.byRequest.get(requestId) ?? {};
            actions[entry.action] = (actions[entry.action] ?? 0) + 1;
            tally.byRequest.set(requestId, actions);
          }
        }
        out.set(t.tenant, tally);
      }
      return out;
    })();
    return audits;
  }

  beforeAll(async () => {
    runStartedAt = Date.now();
    runtime = testRuntime();
    services = createServices(runtime, { taskQueue, indexSettings: TEST_INDEX_SETTINGS });
    await services.ensureIndexes();
    // A worker process would create a tenant's index with the production lease sync (30 s), and every expunge would
    // wait for it: the test creates them with its own 1 s first.
    for (const t of tenants) await services.index.ensureTenantIndex(t.tenant);
    scenario = new Scenario(plan, {
      taskQueue,
      tokenSecret: runtime.config.tokens.hs256Secret!,
      services,
      ports: [await freePort(), await freePort()],
    });
    await Promise.all([scenario.startApi(0), scenario.startApi(1), scenario.startWorker()]);
  }, 10 * 60_000);

  afterAll(async () => {
    const lines = [
      '',
      `scale run: ${plan.memories} memories, ${plan.erasures} erasures, ${plan.tenants} tenants, ` +
        `${plan.memoriesPerSubject} memories a subject, batches of ${plan.batch} (${plan.batchesInFlight} in flight), ` +
        `${plan.readersPerApi} retrieval loops per API; ${os.cpus().length} cores`,
      `started ${new Date(runStartedAt).toISOString()}, ended ${new Date().toISOString()} ` +
        `(${((Date.now() - runStartedAt) / 60_000).toFixed(1)} min); load average now ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      '',
      throughputTable(phases, scenario?.traffic.calls.filter((c) => c.op === 'retrieve') ?? []),
      '',
      ...(scenario ? callSummary(scenario.traffic.calls, scenario.windows) : []),
      `filings sent again after no answer, a 5xx or a 429: ${scenario?.filingRetries ?? 0}; ` +
        `answered as already filed: ${scenario?.filed.filter((r) => r.refiled > 0).length ?? 0}`,
      `operator retries of parked requests: ${sum(scenario?.filed.map((r) => r.operatorRetries) ?? [])}` +
        (scenario?.parkNotes.size ? ` (${[...scenario.parkNotes].map(([n, c]) => `${c} × "${n}"`).join('; ')})` : ''),
      `DPO decisions on copies found: ${sum(scenario?.filed.map((r) => r.dpoDecisions) ?? [])} ` +
        `(copies by owner: ${JSON.stringify(scenario?.findingOwners ?? {})})`,
      `memory statuses at admission: ${JSON.stringify(statusTotals())}`,
      '',
      'processes:',
      ...(scenario?.events ?? []).map((e) => `  ${new Date(e.at).toISOString().slice(11, 23)}  ${e.what}`),
      'their logs at warn or above:',
      ...(scenario?.logSummaries() ?? []),
    ];
    console.log(lines.join('\n'));
    // A request left unfinished by a failure must not run on against a queue nobody polls.
    for (const r of scenario?.filed ?? []) {
      if (r.state === 'completed' || !services) continue;
      await services.temporalClient.workflow
        .getHandle(erasureWorkflowId(r.tenant, r.id))
        .terminate('test cleanup')
        .catch(() => undefined);
    }
    await scenario?.killAll();
    await runtime?.close();
  }, 5 * 60_000);

  function statusTotals(): Record<string, number> {
    const totals: Record<string, number> = {};
    for (const t of tenants) for (const [s, n] of t.statuses) totals[s] = (totals[s] ?? 0) + n;
    return totals;
  }

  it('with one worker: admits its tenants and completes their erasures', async () => {
    await runPhase(newPhase('1 worker', 1, oneWorkerTenants), oneWorkerTenants, oneWorkerTenants);
    expect(scenario.filed.filter((r) => r.state === 'completed')).toHaveLength(
      ERASURES_PER_TENANT * oneWorkerTenants.length,
    );
    expect(scenario.unexpectedExits, 'processes that exited without being stopped').toEqual([]);
  });

  it('with three workers: admits the other tenants and completes their erasures through a worker SIGKILL and an API restart', async () => {
    expect(phases[0]?.erasures, 'the one-worker phase finished').toBe(ERASURES_PER_TENANT * oneWorkerTenants.length);
    await Promise.all([scenario.startWorker(), scenario.startWorker()]);
    expect(scenario.liveWorkers).toHaveLength(3);
    const total = ERASURES_PER_TENANT * threeWorkerTenants.length;
    let restart: Promise<void> | undefined;
    let replacement: Promise<unknown> | undefined;
    await runPhase(newPhase('3 workers', 3, threeWorkerTenants), threeWorkerTenants, tenants, {
      // While filings are still coming in: a third of them filed.
      onFiled: (count) => {
        if (restart || count < Math.ceil(total / 3)) return;
        chaos.filedAtRestart = count;
        restart = scenario.restartApi(1).then(({ window, exit }) => {
          chaos.window = window;
          chaos.apiExit = exit;
        });
      },
      // While erasures are running: a quarter of them completed, the rest in flight or queued.
      onPoll: async (completed) => {
        if (chaos.completedAtKill !== undefined || completed < Math.max(1, Math.floor(total / 4))) return;
        if (completed === total) return;
        chaos.completedAtKill = completed;
        chaos.workerExit = await scenario.killWorker(scenario.liveWorkers[1]!);
        replacement = scenario.startWorker();
      },
    });
    await restart;
    await replacement;
    expect(chaos.filedAtRestart, 'the API restart landed while filings came in').toBeDefined();
    expect(chaos.apiExit, 'the API stopped gracefully on SIGTERM').toEqual({ code: 0, signal: null });
    expect(chaos.completedAtKill, 'the worker was killed while erasures were running').toBeDefined();
    expect(chaos.completedAtKill).toBeLessThan(total);
    expect(chaos.workerExit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(scenario.filed.filter((r) => r.state === 'completed')).toHaveLength(plan.erasures);
    expect(scenario.unexpectedExits, 'processes that exited without being stopped').toEqual([]);
  });

  it('admitted every memory once, each with its event, as written (active)', async () => {
    const memoryIds = tenants.flatMap((t) => [...t.memoryIds.values()].flat());
    const eventIds = tenants.flatMap((t) => [...t.eventIds.values()].flat());
    expect(memoryIds).toHaveLength(plan.memories);
    expect(new Set(memoryIds).size).toBe(plan.memories);
    expect(new Set(eventIds).size).toBe(plan.memories);
    expect(statusTotals()).toEqual({ active: plan.memories });
    const tallies = await auditTallies();
    for (const t of tenants) {
      const created = tallies.get(t.tenant)!.created;
      const ids = [...t.memoryIds.values()].flat();
      expect(
        ids.filter((id) => created.get(id) !== 1),
        t.tenant,
      ).toEqual([]);
    }
  });

  it('completed every request exactly once: one request per subject, one certificate, each audit entry once', async () => {
    const filed = scenario.filed;
    expect(filed).toHaveLength(plan.erasures);
    expect(new Set(filed.map((r) => r.id)).size).toBe(plan.erasures);
    expect(new Set(filed.map((r) => `${r.tenant}/${r.subject}`)).size).toBe(plan.erasures);
    const tallies = await auditTallies();
    for (const t of tenants) {
      const mine = filed.filter((r) => r.tenant === t.tenant);
      // The DPO's list holds exactly these requests: no filing sent twice made a second one.
      const listed = await scenario.traffic.send<{ items: { id: string; state: string; certificateIds: string[] }[] }>(
        'list',
        0,
        { method: 'GET', path: `/v1/tenants/${t.tenant}/erasure-requests?limit=500`, token: await dpo(t) },
      );
      expect(listed.ok, listed.ok ? '' : listed.text).toBe(true);
      if (!listed.ok) continue;
      expect(listed.body.items.map((i) => i.id).sort()).toEqual(mine.map((r) => r.id).sort());
      expect(listed.body.items.filter((i) => i.state !== 'completed' || i.certificateIds.length !== 1)).toEqual([]);

      const tally = tallies.get(t.tenant)!;
      expect(tally.repeatedKeys, 'audit entries written twice').toBe(0);
      for (const r of mine) {
        expect(await services.certificates.byRequest(t.tenant, r.id), r.id).toHaveLength(1);
        const actions = tally.byRequest.get(r.id) ?? {};
        expect(actions, r.id).toMatchObject({
          'erasure.authorised': 1,
          'erasure.marked-deleted': 1,
          'erasure.certified': 1,
        });
        expect(
          Object.entries(actions).filter(([, n]) => n !== 1),
          r.id,
        ).toEqual([]);
      }
    }
    // The request reads completed before its run ends: the run still sends the DPO's notification. A worker
    // SIGKILLed mid-send leaves that activity to its start-to-close timeout (RetryProfiles.notify, 1 minute), so the
    // runs get twice that, all at once, to end before their status is read.
    const grace = new AbortController();
    const graceOver = delay(RUN_END_GRACE_MS, undefined, { signal: grace.signal }).catch(() => undefined);
    const runs = await Promise.all(
      filed.map(async (r) => {
        const handle = services.temporalClient.workflow.getHandle(erasureWorkflowId(r.tenant, r.id));
        await Promise.race([handle.result().catch(() => undefined), graceOver]);
        return handle.describe();
      }),
    );
    grace.abort();
    expect(runs.filter((d) => d.status.name !== 'COMPLETED').map((d) => d.workflowId)).toEqual([]);
  });

  it("verifies each tenant's certificates against its audit chain, as an auditor does offline", async () => {
    for (const t of tenants) {
      const get = async (path: string) => {
        const answer = await scenario.traffic.send<string>('export', 0, {
          method: 'GET',
          path: `/v1/tenants/${t.tenant}${path}`,
          token: await auditor(t),
          text: true,
          timeoutMs: 300_000,
        });
        if (!answer.ok) throw new Error(`${path}: ${answer.status ?? 'no answer'}`);
        return answer.body;
      };
      const [certificates, audit, publicKey] = [
        await get('/certificates'),
        await get('/audit'),
        await get('/certificates/public-key'),
      ];
      expect(
        verifyCertificatesJsonl({ certificates, audit }, { publicKeys: publicKey, tenant: t.tenant }),
      ).toMatchObject({ ok: true, count: ERASURES_PER_TENANT, anchored: ERASURES_PER_TENANT });
    }
  });

  it("kept each tenant's audit tree whole across the workers that signed its checkpoints, SIGKILL included", async () => {
    // The three workers' checkpoint rounds ran all along: every checkpoint any of them signed must be one tree's.
    const checkpoints = runtime.db.collection<SignedCheckpoint>(Collections.auditCheckpoints);
    for (const t of tenants) {
      const final = (await services.checkpoints.publish(t.tenant))!;
      const chain: AuditEntry[] = [];
      for await (const e of services.audit.entries(t.tenant)) chain.push(e);
      expect(final.size, t.tenant).toBe(chain.length);
      expect(await runtime.db.collection(Collections.auditTree).countDocuments({ tenant: t.tenant })).toBe(
        chain.length,
      );
      const signed = await checkpoints.find({ tenant: t.tenant }).toArray();
      expect(signed.length, `${t.tenant}: checkpoints signed during the run`).toBeGreaterThan(1);
      const root = (c: { root: string }) => new Uint8Array(Buffer.from(c.root, 'base64'));
      for (const c of signed) {
        const proof = await services.logTree.consistency(t.tenant, c.size, final.size);
        expect(verifyConsistency(c.size, final.size, proof, root(c), root(final)), `${t.tenant}: ${c.size}`).toBe(true);
      }
      const index = Math.floor(chain.length / 2);
      const proof = await services.logTree.inclusion(t.tenant, index, final.size);
      expect(verifyInclusion(auditLeaf(chain[index]!), index, final.size, proof, root(final))).toBe(true);
    }
  });

  it("leaves nothing of an erased subject in MongoDB, Elasticsearch or the writer's search", async () => {
    for (const t of tenants) {
      const memories = erasedMemoryIds(t);
      const events = erasedEventIds(t);
      expect(memories).toHaveLength(ERASURES_PER_TENANT * plan.memoriesPerSubject);
      expect(await services.memories.getMany(t.tenant, memories)).toEqual([]);
      expect(await services.events.getMany(t.tenant, events)).toEqual([]);
      expect((await services.index.probe(t.tenant, { ids: memories })).byId).toEqual([]);
      const erasedSubjects = t.erased.map(subjectId);
      expect((await services.index.probe(t.tenant, { subjects: erasedSubjects })).bySubject).toEqual([]);
      for (const s of t.erased) {
        expect(await services.memories.idsBySubject(t.tenant, subjectId(s))).toEqual([]);
        expect(await services.events.idsBySubject(t.tenant, subjectId(s))).toEqual([]);
        const served = await search(t, subjectName(s));
        expect(served.filter((m) => memories.includes(m.id) || m.subjects.includes(subjectId(s)))).toEqual([]);
      }
    }
  });

  it('keeps every other subject: its records in MongoDB, and the writer still finds them', async () => {
    for (const t of tenants) {
      const kept = t.subjects - t.erased.length;
      const db = runtime.db;
      expect(await db.collection(Collections.memories).countDocuments({ tenant: t.tenant })).toBe(
        kept * plan.memoriesPerSubject,
      );
      expect(await db.collection(Collections.events).countDocuments({ tenant: t.tenant })).toBe(
        kept * plan.memoriesPerSubject,
      );
      // A sample of the survivors is found by name: the search that finds nothing of the erased ones works.
      const erased = new Set(t.erased);
      const survivors = Array.from({ length: t.subjects }, (_, s) => s).filter((s) => !erased.has(s));
      for (const s of spreadPick(survivors.length, Math.min(10, survivors.length)).map((i) => survivors[i]!)) {
        const served = await search(t, subjectName(s));
        expect(served.filter((m) => m.subjects.includes(subjectId(s))).length, subjectName(s)).toBeGreaterThan(0);
      }
    }
  });

  it('answered retrievals on both APIs without a 5xx or a dropped call outside the restart window', () => {
    const retrievals = scenario.traffic.calls.filter((c) => c.op === 'retrieve');
    expect(retrievals.filter((c) => c.api === 0).length).toBeGreaterThan(0);
    expect(retrievals.filter((c) => c.api === 1).length).toBeGreaterThan(0);
    const outside = retrievals.filter((c) => !inWindow(c, scenario.windows));
    const failed = outside.filter((c) => c.status === null || c.status >= 500);
    expect(failed.map((c) => `api ${c.api}: ${c.status ?? c.error}`)).toEqual([]);
  });

  it('never served an erased record to a retrieval sent after its request completed', () => {
    const erasedAt = new Map<string, number>();
    for (const r of scenario.filed) {
      const t = tenants.find((x) => x.tenant === r.tenant)!;
      for (const id of t.memoryIds.get(r.subject) ?? []) erasedAt.set(id, r.observedAt!);
    }
    const late = scenario.retrievals.filter((q) =>
      q.itemIds.some((id) => erasedAt.has(id) && erasedAt.get(id)! < q.sentAt),
    );
    expect(late).toEqual([]);
    // The loops did ask about erased subjects after their erasure: the check above is not empty.
    const askedAfter = scenario.retrievals.filter((q) => {
      const r = scenario.filed.find((x) => x.tenant === q.tenant && x.subject === q.subject);
      return r?.observedAt !== undefined && r.observedAt < q.sentAt;
    });
    expect(askedAfter.length).toBeGreaterThan(0);
  });

  it("parked no request for an operator, and every copy it put to the DPO was another subject's record", () => {
    const parked = scenario.filed.filter((r: FiledRequest) => r.operatorRetries > 0);
    expect({ parked: parked.length, notes: Object.fromEntries(scenario.parkNotes) }).toEqual({ parked: 0, notes: {} });
    // A copy of the erased subject's own, or of no subject the test wrote, would be a record the closure missed.
    expect({
      sameSubject: scenario.findingOwners.sameSubject,
      unknown: scenario.findingOwners.unknown,
    }).toEqual({ sameSubject: 0, unknown: 0 });
  });

  /** What the writer's search serves for a query, as ids and subjects. */
  async function search(t: TenantData, query: string): Promise<{ id: string; subjects: string[] }[]> {
    const answer = await scenario.traffic.send<{ results: { memory: { id: string; subjects?: string[] } }[] }>(
      'search',
      0,
      {
        method: 'POST',
        path: `/v1/tenants/${t.tenant}/search`,
        token: await scenario.token(t.tenant, ['agent'], t.writer),
        body: { query, k: 20, intent: 'history' },
      },
    );
    if (!answer.ok) throw new Error(`search: ${answer.status ?? 'no answer'} ${answer.text.slice(0, 200)}`);
    return answer.body.results.map((r) => ({ id: r.memory.id, subjects: r.memory.subjects ?? [] }));
  }
});

/** Per kind of call: what it got, inside and outside the restart window. */
function callSummary(calls: readonly CallRecord[], windows: readonly Window[]): string[] {
  const kinds = [...new Set(calls.map((c) => c.op))];
  const lines = ['calls, by what they got (status × count):'];
  for (const op of kinds) {
    const mine = calls.filter((c) => c.op === op);
    const inside = mine.filter((c) => inWindow(c, windows));
    const outside = mine.filter((c) => !inWindow(c, windows));
    lines.push(
      `  ${op}: outside the restart window ${outcomes(outside) || 'none'}` +
        (inside.length ? `; inside it ${outcomes(inside)}` : ''),
    );
  }
  for (const w of windows)
    lines.push(`  restart window of API ${w.api}: ${((w.to - w.from) / 1000).toFixed(1)} s (SIGTERM → ready again)`);
  return lines;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
