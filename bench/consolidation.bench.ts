/**
 * Consolidation benchmark: `LETHE_ENV=development npx tsx bench/consolidation.bench.ts` with the stack up.
 *
 * One Lethe process (the API on a real HTTP listener at 127.0.0.1, and a worker on the bench's own task queue, with
 * production defaults but for the rate limits, raised so that the bench's own calls are never refused, and the idle
 * socket timeout, raised so that a long run's call gets its answer: the report says which runs outlast it) serves one
 * tenant of a synthetic customer-support workload (bench/lib/consolidation-workload.ts): BENCH_CONSOLIDATION_SUBJECTS
 * (default 64, so that the bench stays near 10 minutes on 2 cores) customers over 4 agents, each customer with 4–6
 * attributes. The owner writes the CRM profile and what it extracts, corrections of the profile at its source for
 * values that change (the old value is superseded, not disputed), and chats in which the customer restates current
 * values; some customers are served by a second agent too.
 * Every write is a batch through `POST …/batches` (admission, derivation audit, contradiction detection).
 *
 * Measured and printed (tables to stdout, progress to stderr):
 *  1. Events in, views out, per agent: events and memories written, active records of the agent, views and
 *     summaries built against what the workload implies, views held for sign-off or refused (by reason), the inputs
 *     the built views consolidate (memories, and the events behind them), and a re-run's built count (0: idempotent).
 *  2. Retrieval recall with and without views: each owner asks about each of its customers (current intent, `POST
 *     …/retrieve`, k = 5 and k = 10, a 4000-token budget) one attribute (twice), two attributes, and the whole
 *     customer, before consolidation and after; recall of the known current facts, stale items served, tokens
 *     served, and for the whole-customer question the items and tokens of the shortest prefix holding every fact.
 *  3. Cost per consolidated record: one run per agent (agent-1 and agent-3 with LETHE_CONSOLIDATION_PAUSE_MS at its
 *     default, agent-2 and agent-4 at 0; agent-3 and agent-4 beside online retrievals), its wall time (the API call)
 *     per view built, per input memory and per input event; and where the time goes, from the run's Temporal
 *     history and its children's (planning, the pauses' timers, each view's ingestion and its activities).
 *  4. Online retrieval while a run goes: p50/p95 of retrievals by the owners (2 in flight, k = 10) alone for
 *     BENCH_CONSOLIDATION_SOLO_SECONDS (12) before the runs and again after, and during the runs at each pause.
 *
 * The pause is the API's (the consolidation gateway passes it to the run): the bench's API switches between two
 * gateways built like the default one. Indices get the 1 s soft-delete lease sync the tests use. A database of its
 * own, dropped at the end with the tenant's index. No timed assertion: figures only.
 */
import http from 'node:http';
import os from 'node:os';
import { DefaultLogger, Runtime as TemporalRuntime } from '@temporalio/worker';
import { createRuntime } from '../app/runtime.js';
import { createServices, type Services } from '../app/services.js';
import { buildApiServer } from '../app/api/server.js';
import { loadConfig } from '../src/config/load-config.js';
import { mintToken } from '../src/governance/auth/tokens.js';
import { loadTokenKeys } from '../src/governance/auth/token-keys.js';
import { mapBounded } from '../src/substrate/mongo/collections.js';
import { tenantIndexNames } from '../src/substrate/search/index-layout.js';
import { bundleWorkflows, createLetheWorker } from '../app/worker/worker.js';
import { createConsolidationGateway, type ConsolidationGateway } from '../src/temporal/consolidation-gateway.js';
import type { ConsolidationResult } from '../src/temporal/contracts/consolidation.contract.js';
import { consolidationWorkflowId } from '../src/shared/workflow-ids.js';
import { send } from './lib/abuse-http.js';
import { benchName, endRunningWorkflows, envInt, runBench } from './lib/bench-run.js';
import { runBreakdown, type RunBreakdown } from './lib/consolidation-history.js';
import { addRecall, emptyRecall, mean, type Item, type RecallTally } from './lib/consolidation-recall.js';
import { generateWorkload, PHASES, type Question, type Session } from './lib/consolidation-workload.js';
import { loadAverage, num, percentile, ratio, table } from './lib/stack-report.js';

const SUBJECTS = envInt('BENCH_CONSOLIDATION_SUBJECTS', 64);
const SEED = envInt('BENCH_CONSOLIDATION_SEED', 7);
const SOLO_SECONDS = envInt('BENCH_CONSOLIDATION_SOLO_SECONDS', 12);
const AGENTS = 4;
/** Batches written at once, and recall questions asked at once. */
const WRITERS = 8;
const ASKERS = 2;
/** Online retrievals in flight while a probe runs. */
const PROBES = 2;
const KS = [5, 10] as const;
const BUDGET_TOKENS = 4000;
const NAMESPACE = 'support';
const INDEX_SETTINGS = { 'index.soft_deletes.retention_lease.sync_interval': '1s' };
const RAISED_LIMITS = {
  LETHE_RATE_LIMIT_PER_PRINCIPAL: '1000000',
  LETHE_RATE_LIMIT_PER_TENANT: '10000000',
  LETHE_RATE_LIMIT_PER_ADDRESS: '1000000',
  // A run answers when it is done: a long one outlasts the default idle-socket timeout (see the report).
  LETHE_HTTP_CONNECTION_TIMEOUT_MS: '3600000',
};

/** One POST that may take many minutes (fetch gives up on headers after 300 s): status and body. */
function postLong(
  baseUrl: string,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${baseUrl}${path}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

const progress = (message: string) => process.stderr.write(`bench:consolidation: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);
const load = loadAverage;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface RetrievedItem {
  id: string;
  kind: string;
  content?: string;
  tokens: number;
}

/** The runs, one per agent: its pause, and whether online retrievals go on beside it. */
function runPlan(defaultPause: number) {
  return [
    { agent: 'agent-1', pauseMs: defaultPause, online: false },
    { agent: 'agent-2', pauseMs: 0, online: false },
    { agent: 'agent-3', pauseMs: defaultPause, online: true },
    { agent: 'agent-4', pauseMs: 0, online: true },
  ];
}

interface RunMeasure {
  agent: string;
  pauseMs: number;
  online: boolean;
  ms: number;
  result: ConsolidationResult;
  inputs: number;
  events: number;
  latencies: number[];
  breakdown: RunBreakdown;
}

async function main(): Promise<void> {
  const wallStart = performance.now();
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_bench_consolidation`;
  const config = loadConfig({ LOG_LEVEL: 'error', ...process.env, ...RAISED_LIMITS, MONGODB_URI: uri.toString() });
  // The default pause, whatever the environment sets: the bench compares it with 0.
  const { LETHE_CONSOLIDATION_PAUSE_MS: _ignored, ...withoutPause } = process.env;
  const defaults = loadConfig({ ...withoutPause, LOG_LEVEL: 'warn' });
  const defaultPause = defaults.consolidation.pauseMs;
  const runtime = createRuntime(config, 'lethe-bench');
  const taskQueue = benchName('consolidation');
  const tenant = benchName('support');
  const services = createServices(runtime, { taskQueue, indexSettings: INDEX_SETTINGS });
  const gateways = new Map<number, ConsolidationGateway>(
    [defaultPause, 0].map((pauseMs) => [
      pauseMs,
      // The bench times whole runs: its calls wait for them to end.
      createConsolidationGateway({ client: services.temporalClient, taskQueue, pauseMs, waitMs: 3_600_000 }),
    ]),
  );
  let pause = defaultPause;
  const apiServices: Services = {
    ...services,
    workflows: {
      ...services.workflows,
      consolidations: { run: (principal, request) => gateways.get(pause)!.run(principal, request) },
    },
  };
  const workload = generateWorkload({
    subjects: SUBJECTS,
    agents: AGENTS,
    seed: SEED,
    changeShare: 0.3,
    restateShare: 0.45,
    secondShare: 0.3,
  });
  const secret = config.tokens.hs256Secret!;
  const ttl = Math.min(config.tokens.maxTtlSeconds, 4 * 3600);
  const tokens = new Map<string, string>();
  for (const agent of workload.agents)
    tokens.set(agent, await mintToken(secret, { id: agent, tenant, roles: ['agent'] }, ttl));

  out(`## bench:consolidation — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${load()}`);
  out(`MongoDB ${uri.toString()} · Temporal ${config.temporal.address} · Elasticsearch ${config.elasticsearch.url}`);
  out(
    `Workload: ${SUBJECTS} customers, ${AGENTS} agents, seed ${SEED}; ${workload.sessions.length} batches ` +
      `(${PHASES.map((p) => `${p} ${workload.sessions.filter((s) => s.phase === p).length}`).join(', ')}); ` +
      `${workload.questions.length} questions; embedder ${config.embedder.kind}; pauses ${defaultPause} ms and 0 ms.`,
  );
  out();

  progress('bundling the Lethe workflows');
  const bundle = await bundleWorkflows();
  await services.ensureIndexes();
  const worker = await createLetheWorker(runtime, { taskQueue, services, workflowBundle: bundle });
  const running = worker.run();
  const api = await buildApiServer({
    log: runtime.log,
    probes: runtime.probes,
    services: apiServices,
    tokenKeys: loadTokenKeys(config.tokens),
    tokenLimits: config.tokens,
    limits: config.limits,
  });
  try {
    const baseUrl = await api.listen({ host: '127.0.0.1', port: 0 });
    const post = (agent: string, path: string, body: unknown) =>
      send(baseUrl, { method: 'POST', path: `/v1/tenants/${tenant}${path}`, token: tokens.get(agent)!, body });
    const refresh = () =>
      runtime.es.indices.refresh({ index: tenantIndexNames(config.elasticsearch.indexPrefix, tenant).alias });

    // ── Writes, phase by phase; one subject's batches of a phase in their order ──
    const written = new Map(workload.agents.map((a) => [a, { events: 0, memories: 0 }]));
    const writeStatuses = new Map<string, number>();
    const memoryStatuses = new Map<string, number>();
    const tally = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
    const writeStart = performance.now();
    for (const phase of PHASES) {
      const bySubject = new Map<string, Session[]>();
      for (const s of workload.sessions.filter((x) => x.phase === phase))
        bySubject.set(s.subject, [...(bySubject.get(s.subject) ?? []), s]);
      const started = performance.now();
      await mapBounded([...bySubject.values()], WRITERS, async (sessions) => {
        for (const s of sessions.sort((a, b) => a.order - b.order)) {
          const response = await post(s.agent, '/batches', s.batch);
          tally(writeStatuses, String(response.status));
          if (response.status !== 201) {
            progress(`write ${s.phase} ${s.subject} by ${s.agent}: ${response.status} ${response.body.slice(0, 300)}`);
            continue;
          }
          const body = JSON.parse(response.body) as {
            events: { outcome: string }[];
            memories: { status: string; derivation?: string }[];
          };
          const w = written.get(s.agent)!;
          w.events += body.events.length;
          w.memories += body.memories.length;
          for (const m of body.memories)
            tally(memoryStatuses, m.status === 'active' ? 'active' : `${m.status} (${m.derivation ?? 'policy'})`);
        }
      });
      progress(
        `wrote phase ${phase}: ${bySubject.size} subjects in ${secs(performance.now() - started)} (load ${load()})`,
      );
    }
    const writeMs = performance.now() - writeStart;
    await refresh();
    const statusesAfterWrites = await countStatuses(runtime, tenant);

    // ── Retrieval recall, before ──
    const ask = async (q: Question, k: number): Promise<Item[] | null> => {
      const response = await post(q.agent, '/retrieve', {
        query: q.text,
        k,
        budgetTokens: BUDGET_TOKENS,
        namespaces: [NAMESPACE],
      });
      if (response.status !== 200) {
        progress(`retrieve ${response.status} ${response.body.slice(0, 200)}`);
        return null;
      }
      return (JSON.parse(response.body) as { items: RetrievedItem[] }).items.map((i) => ({
        id: i.id,
        kind: i.kind,
        content: i.content ?? '',
        tokens: i.tokens,
      }));
    };
    const recallPass = async (label: string) => {
      const tallies = new Map<string, RecallTally>();
      const prefixes = new Map<number, { items: number; tokens: number } | null>();
      const started = performance.now();
      let failed = 0;
      await mapBounded([...workload.questions.entries()], ASKERS, async ([i, q]) => {
        for (const k of KS) {
          const items = await ask(q, k);
          if (!items) {
            failed++;
            continue;
          }
          for (const kind of [q.kind, 'all']) {
            const key = `${kind}@${k}`;
            if (!tallies.has(key)) tallies.set(key, emptyRecall());
            const prefix = addRecall(tallies.get(key)!, q, items);
            if (kind === 'all' && k === 10 && q.kind === 'whole subject') prefixes.set(i, prefix);
          }
        }
      });
      progress(
        `recall ${label}: ${workload.questions.length} questions × ${KS.length} k in ${secs(performance.now() - started)}${failed ? `, ${failed} failed` : ''}`,
      );
      return { tallies, prefixes };
    };
    progress(`warm-up retrievals (load ${load()})`);
    for (const q of workload.questions.slice(0, 10)) await ask(q, 10);
    const before = await recallPass('before consolidation');

    // ── Online retrievals: a probe of PROBES calls in flight until stopped ──
    const probe = () => {
      const latencies: number[] = [];
      let stop = false;
      let next = 0;
      const done = Promise.all(
        Array.from({ length: PROBES }, async () => {
          while (!stop) {
            const q = workload.questions[next++ % workload.questions.length]!;
            const startedAt = performance.now();
            const response = await post(q.agent, '/retrieve', { query: q.text, k: 10, namespaces: [NAMESPACE] });
            if (response.status === 200) latencies.push(performance.now() - startedAt);
          }
        }),
      );
      return {
        latencies,
        async stop() {
          stop = true;
          await done;
          return latencies;
        },
      };
    };
    const solo = async (label: string) => {
      progress(`retrievals alone for ${SOLO_SECONDS} s (${label}, load ${load()})`);
      const p = probe();
      await new Promise((resolve) => setTimeout(resolve, SOLO_SECONDS * 1000));
      return p.stop();
    };
    const soloBefore = await solo('before the runs');

    // ── The runs ──
    const consolidate = async (agent: string, trigger: string) => {
      const response = await postLong(baseUrl, `/v1/tenants/${tenant}/consolidations`, tokens.get(agent)!, {
        namespace: NAMESPACE,
        trigger,
      });
      if (response.status !== 200) throw new Error(`consolidation by ${agent}: ${response.status} ${response.body}`);
      return JSON.parse(response.body) as ConsolidationResult;
    };
    const runs: RunMeasure[] = [];
    for (const plan of runPlan(defaultPause)) {
      pause = plan.pauseMs;
      progress(
        `run by ${plan.agent}, pause ${plan.pauseMs} ms${plan.online ? ', beside online retrievals' : ''} (load ${load()})`,
      );
      const online = plan.online ? probe() : null;
      const started = performance.now();
      const result = await consolidate(plan.agent, 'session-end');
      const ms = performance.now() - started;
      const latencies = online ? await online.stop() : [];
      const { inputs, events } = await inputsOf(services, tenant, result);
      const breakdown = await runBreakdown(
        services.temporalClient,
        consolidationWorkflowId(tenant, NAMESPACE, plan.agent),
      );
      runs.push({ ...plan, ms, result, inputs, events, latencies, breakdown });
      progress(`  built ${result.built} of ${result.views.length} in ${secs(ms)}`);
    }
    pause = defaultPause;
    await refresh();
    const soloAfter = await solo('after the runs');

    progress(`re-runs (load ${load()})`);
    const reruns = new Map<string, ConsolidationResult>();
    for (const agent of workload.agents) reruns.set(agent, await consolidate(agent, 'manual'));
    const held = await heldReasons(services, tenant, runs);
    const after = await recallPass('after consolidation');
    const statusesAtEnd = await countStatuses(runtime, tenant);

    // ── Report ──
    out(`### 1. Events in, views out (per agent; namespace \`${NAMESPACE}\`, each agent's own scope)`);
    out();
    // Per agent, then summed: the row's numbers.
    const counts = workload.agents.map((agent) => {
      const r = runs.find((x) => x.agent === agent)!;
      const views = r.result.views;
      const built = (kind: 'view' | 'summary') =>
        views.filter((v) => v.status !== 'refused' && kindOf(held, v.id) === kind).length;
      const status = (s: string) => views.filter((v) => v.status === s).length;
      const rerun = reruns.get(agent)!;
      return {
        agent,
        owned: workload.subjects.filter((s) => s.owner === agent).length,
        second: workload.subjects.filter((s) => s.second === agent).length,
        ...written.get(agent)!,
        read: r.result.read,
        views: built('view'),
        summaries: built('summary'),
        expectedViews: workload.expected.get(agent)!.views,
        expectedSummaries: workload.expected.get(agent)!.summaries,
        candidate: status('candidate'),
        refused: status('refused'),
        disputed: status('disputed'),
        skipped: Object.values(r.result.skipped).reduce((n, x) => n + x, 0),
        inputs: r.inputs,
        inputEvents: r.events,
        rerunBuilt: rerun.built,
        rerunExisting: rerun.existing,
      };
    });
    type Counts = (typeof counts)[number];
    const total = (key: keyof Omit<Counts, 'agent'>) => counts.reduce((n, c) => n + c[key], 0);
    const row = (label: string, c: (key: keyof Omit<Counts, 'agent'>) => number, read: string) => [
      label,
      `${c('owned')} / ${c('second')}`,
      String(c('events')),
      String(c('memories')),
      read,
      `${c('views')} / ${c('summaries')}`,
      `${c('expectedViews')} / ${c('expectedSummaries')}`,
      `${c('candidate')} / ${c('refused')} / ${c('disputed')}`,
      String(c('skipped')),
      `${c('inputs')} / ${c('inputEvents')}`,
      `${c('rerunBuilt')} / ${c('rerunExisting')}`,
    ];
    out(
      table(
        [
          'agent',
          'customers owned / second',
          'events written',
          'memories written',
          'active records read by its run',
          'built: views / summaries',
          'workload implies',
          'held / refused / disputed',
          'skipped',
          'inputs: memories / events',
          're-run: built / existing',
        ],
        [...counts.map((c) => row(c.agent, (key) => c[key], String(c.read))), row('total', total, '—')],
      ),
    );
    out();
    out(
      `writes: ${secs(writeMs)}; HTTP statuses ${fmtCounts(writeStatuses)}; memories admitted ${fmtCounts(memoryStatuses)}`,
    );
    out(
      `tenant's memories by status after the writes: ${fmtCounts(statusesAfterWrites)}; at the end: ${fmtCounts(statusesAtEnd)}`,
    );
    out(`views held for sign-off or refused, by reason: ${fmtCounts(held.reasons) || 'none'}`);
    out(
      `"active records read": every active record of the tenant a run pages through (all agents' records and earlier views), ` +
        `of which only its own are consolidated. Inputs: distinct records the built views cite, and the distinct events those cite.`,
    );
    out();

    out(`### 2. Retrieval recall with and without views (current intent, owner asks, budget ${BUDGET_TOKENS} tokens)`);
    out();
    const kinds = ['one attribute', 'two attributes', 'whole subject', 'all'];
    /** "before → after" of one figure of the tallies of a kind of question at k. */
    const change = (kind: string, k: number, f: (t: RecallTally) => number, digits = 3) =>
      [before, after]
        .map((pass) => pass.tallies.get(`${kind}@${k}`))
        .map((t) => (t && t.questions > 0 ? f(t).toFixed(digits) : 'n/a'))
        .join(' → ');
    const recall = (t: RecallTally) => t.recallSum / t.questions;
    out(
      table(
        [
          'questions',
          'n',
          'recall@5 before → after',
          'recall@10 before → after',
          'stale items @10 before → after',
          'items @10 before → after',
          'tokens @10 before → after',
          'views+summaries among items @10 after',
        ],
        kinds.map((kind) => [
          kind,
          String(before.tallies.get(`${kind}@10`)?.questions ?? 0),
          change(kind, 5, recall),
          change(kind, 10, recall),
          change(kind, 10, (t) => t.stale, 0),
          change(kind, 10, (t) => t.items / t.questions, 1),
          change(kind, 10, (t) => t.tokens / t.questions, 0),
          (() => {
            const t = after.tallies.get(`${kind}@10`);
            return t && t.items > 0 ? (t.derived / t.items).toFixed(3) : 'n/a';
          })(),
        ]),
      ),
    );
    out();
    const whole = [...workload.questions.entries()].filter(([, q]) => q.kind === 'whole subject').map(([i]) => i);
    const both = whole.filter((i) => before.prefixes.get(i) && after.prefixes.get(i));
    const pref = (pass: typeof before, ids: number[], f: (p: { items: number; tokens: number }) => number) =>
      mean(
        ids
          .map((i) => pass.prefixes.get(i))
          .filter((p): p is { items: number; tokens: number } => !!p)
          .map(f),
      );
    out(
      `Whole-customer questions at k = 10: the shortest prefix of the answer holding every current fact of the customer`,
    );
    out();
    out(
      table(
        ['measure', 'before', 'after', 'after / before'],
        [
          [
            'answers holding every fact',
            `${before.tallies.get('whole subject@10')?.complete ?? 0} of ${whole.length}`,
            `${after.tallies.get('whole subject@10')?.complete ?? 0} of ${whole.length}`,
            ratio(
              (after.tallies.get('whole subject@10')?.complete ?? 0) /
                Math.max(1, before.tallies.get('whole subject@10')?.complete ?? 0),
            ),
          ],
          [
            `items to cover (mean, ${both.length} answers complete both times)`,
            num(pref(before, both, (p) => p.items)),
            num(pref(after, both, (p) => p.items)),
            ratio(pref(after, both, (p) => p.items) / pref(before, both, (p) => p.items)),
          ],
          [
            `tokens to cover (mean, same answers)`,
            num(pref(before, both, (p) => p.tokens)),
            num(pref(after, both, (p) => p.tokens)),
            ratio(pref(after, both, (p) => p.tokens) / pref(before, both, (p) => p.tokens)),
          ],
          ['facts per customer (mean)', num(mean(workload.subjects.map((s) => s.current.size))), '', ''],
        ],
      ),
    );
    out();

    out(`### 3. Cost per consolidated record (wall time of the run's API call)`);
    out();
    out(
      table(
        [
          'run',
          'pause ms',
          'online retrievals',
          'views built',
          'input memories',
          'input events',
          'wall',
          'ms / view',
          'ms / input memory',
          'ms / input event',
        ],
        runs.map((r) => [
          r.agent,
          String(r.pauseMs),
          r.online ? `${PROBES} in flight` : 'none',
          String(r.result.built),
          String(r.inputs),
          String(r.events),
          secs(r.ms),
          num(r.ms / Math.max(1, r.result.built)),
          num(r.ms / Math.max(1, r.inputs)),
          num(r.ms / Math.max(1, r.events)),
        ]),
      ),
    );
    out();
    const perView = (pauseMs: number, online: boolean) => {
      const r = runs.find((x) => x.pauseMs === pauseMs && x.online === online)!;
      return r.ms / Math.max(1, r.result.built);
    };
    out(
      `pause ${defaultPause} / pause 0, ms per view: ${ratio(perView(defaultPause, false) / perView(0, false))} without online traffic, ` +
        `${ratio(perView(defaultPause, true) / perView(0, true))} beside it. Each pause is a Temporal timer between two views (below: what one took).`,
    );
    out();
    const cut = runs.filter((r) => r.ms > defaults.limits.http.connectionTimeoutMs);
    out(
      `runs whose API call outlasted the default idle-socket timeout (LETHE_HTTP_CONNECTION_TIMEOUT_MS ` +
        `${defaults.limits.http.connectionTimeoutMs} ms; raised here): ` +
        `${cut.map((r) => `${r.agent} (${secs(r.ms)})`).join(', ') || 'none'}. With the default, the caller's socket is ` +
        `closed with no answer at that point while the run goes on (a retry joins it).`,
    );
    out();
    out(`Where a run's time goes (Temporal histories, server clock; ms per view built unless said)`);
    out();
    const activityTypes = [
      ...runs
        .reduce((all, r) => {
          for (const [type, ms] of r.breakdown.childActivities) all.set(type, (all.get(type) ?? 0) + ms);
          return all;
        }, new Map<string, number>())
        .entries(),
    ]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([type]) => type);
    out(
      table(
        [
          'run',
          'workflow',
          'planning (once)',
          'pauses: timers × ms each',
          'ingestion child',
          ...activityTypes.map((t) => `of it ${t}`),
          'API call − workflow',
        ],
        runs.map((r) => {
          const b = r.breakdown;
          const per = (ms: number) => num(ms / Math.max(1, b.children));
          return [
            `${r.agent} (pause ${r.pauseMs}${r.online ? ', online' : ''})`,
            secs(b.workflowMs),
            secs(b.planMs),
            b.timers === 0 ? '0' : `${b.timers} × ${num(b.pauseMs / b.timers)}`,
            per(b.childMs),
            ...activityTypes.map((t) => per(b.childActivities.get(t) ?? 0)),
            num(r.ms - b.workflowMs),
          ];
        }),
      ),
    );
    out();

    out(`### 4. Online retrievals (k = 10, ${PROBES} in flight, owners' questions) alone and while a run goes`);
    out();
    const lat = (label: string, values: number[]) => [
      label,
      String(values.length),
      num(percentile(values, 50)),
      num(percentile(values, 95)),
      ratio(percentile(values, 50) / percentile(soloBefore, 50)),
      ratio(percentile(values, 95) / percentile(soloBefore, 95)),
    ];
    out(
      table(
        ['phase', 'calls', 'p50 ms', 'p95 ms', 'p50 / alone before', 'p95 / alone before'],
        [
          lat(`alone, before the runs (${SOLO_SECONDS} s)`, soloBefore),
          ...runs
            .filter((r) => r.online)
            .map((r) => lat(`during ${r.agent}'s run, pause ${r.pauseMs} ms (${secs(r.ms)})`, r.latencies)),
          lat(`alone, after the runs (${SOLO_SECONDS} s)`, soloAfter),
        ],
      ),
    );
    out();
    out(`wall ${secs(performance.now() - wallStart)}; load at the end ${load()}`);
  } finally {
    await api.close();
    await endRunningWorkflows(services.temporalClient, taskQueue, 'bench:consolidation', progress);
    worker.shutdown();
    await running;
    // The tenant's retention schedule (its first write ensured one) goes with it.
    await services.retentionScheduler
      .retire(tenant)
      .catch((error: unknown) => progress(`retire schedule: ${String(error)}`));
    await services.index.dropTenant(tenant).catch((error: unknown) => progress(`drop index: ${String(error)}`));
    await runtime.db.dropDatabase().catch((error: unknown) => progress(`drop failed: ${(error as Error).message}`));
    await runtime.close();
  }
}

const fmtCounts = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

/** The tenant's memories by status (read from MongoDB, as a reviewer sees them). */
async function countStatuses(runtime: ReturnType<typeof createRuntime>, tenant: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const docs = await runtime.db
    .collection<{ tenant: string; status: string; kind: string }>('memories')
    .find({ tenant }, { projection: { status: 1, kind: 1 } })
    .toArray();
  for (const d of docs) {
    const key = d.kind === 'view' || d.kind === 'summary' ? `${d.status} ${d.kind}` : d.status;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** The distinct inputs the built views of a run cite, and the distinct events those inputs cite. */
async function inputsOf(
  services: Services,
  tenant: string,
  result: ConsolidationResult,
): Promise<{ inputs: number; events: number }> {
  const built = result.views.filter((v) => v.status !== 'refused').map((v) => v.id);
  const views = await services.memories.getMany(tenant, built);
  const inputIds = [...new Set(views.flatMap((v) => v.provenance.parentIds))];
  const inputs = await services.memories.getMany(tenant, inputIds);
  const events = new Set(inputs.flatMap((r) => r.provenance.eventIds));
  return { inputs: inputIds.length, events: events.size };
}

interface HeldReasons {
  reasons: Map<string, number>;
  kinds: Map<string, string>;
}

/** Why each view a run built waits for sign-off or was refused, and every built view's kind. */
async function heldReasons(services: Services, tenant: string, runs: RunMeasure[]): Promise<HeldReasons> {
  const reasons = new Map<string, number>();
  const kinds = new Map<string, string>();
  for (const run of runs) {
    const records = new Map(
      (
        await services.memories.getMany(
          tenant,
          run.result.views.map((v) => v.id),
        )
      ).map((r) => [r._id, r]),
    );
    for (const v of run.result.views) {
      const record = records.get(v.id);
      if (record) kinds.set(v.id, record.kind);
      if (v.status === 'active') continue;
      const why =
        v.status === 'refused'
          ? `refused: ${v.refusal ?? 'unknown'}`
          : `${v.status}: ${record?.quarantinedFor?.join('+') ?? (record?.derivation ? `derivation ${record.derivation.label}` : (record?.statusReason ?? 'unknown'))}`;
      reasons.set(why, (reasons.get(why) ?? 0) + 1);
    }
  }
  return { reasons, kinds };
}

const kindOf = (held: HeldReasons, id: string) => held.kinds.get(id);

await runBench(async () => {
  TemporalRuntime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
  await main();
});
