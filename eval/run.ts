/**
 * `npm run eval`: the evaluation table of seed 004 §7.5, measured end to end in one run. Workloads W1–W4
 * (eval/workloads/), each a seeded script whose expected answers are folded from its events, replayed against Lethe
 * (its real services on the local stack, eval/systems/lethe.ts), B3 basic RAG and B2 window + summary, with the same
 * embedder (the configured one) and the same context budgets, tokens counted with Lethe's estimate for all. Prints
 * Table 1 and writes `docs/eval/<date>.md` with the Pareto picture beside it (`<date>-pareto.svg`) and a bar chart of
 * Table 1's shares (`<date>-metrics.svg`).
 *
 * LETHE_EVAL_SCALE (default 1) multiplies the workloads' sizes; LETHE_EVAL_SEED (default 4) seeds them. A MongoDB
 * database of its own (`<db>_eval`), dropped at the end, and the run's tenants' indices.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import * as prettier from 'prettier';
import { createRuntime } from '../app/runtime.js';
import { createServices } from '../app/services.js';
import { bundleWorkflows } from '../app/worker/worker.js';
import { benchName, runBench } from '../bench/lib/bench-run.js';
import { loadAverage, markdownTable } from '../bench/lib/stack-report.js';
import { loadConfig } from '../src/config/load-config.js';
import { createEmbedder } from '../src/substrate/search/embedder-factory.js';
import { paretoSvg } from './pareto-svg.js';
import { metricBarsSvg } from './metric-bars-svg.js';
import { askOf, replay } from './replay.js';
import { createWindowSummary } from './systems/b2-window-summary.js';
import { createBasicRag } from './systems/b3-basic-rag.js';
import { createLetheSystem } from './systems/lethe.js';
import type { EvalSystem } from './systems/system.js';
import { cells, HEADER, NOT_RUN, pointsOf, rowOf, type SystemRun } from './table.js';
import { w1Project } from './workloads/w1-project.js';
import { w2Policies } from './workloads/w2-policies.js';
import { w3Tenants } from './workloads/w3-tenants.js';
import { canariesOf, w4Regulated } from './workloads/w4-regulated.js';

const SCALE = Number(process.env.LETHE_EVAL_SCALE ?? 1);
if (!(SCALE > 0)) throw new Error('LETHE_EVAL_SCALE must be a positive number');
const SEED = Number(process.env.LETHE_EVAL_SEED ?? 4);
if (!Number.isInteger(SEED)) throw new Error('LETHE_EVAL_SEED must be an integer');
const BUDGETS = [100, 200, 400];
const MAIN_BUDGET = 200;
const K = 20;
const START = new Date('2026-03-02T00:00:00Z');
const INDEX_SETTINGS = { 'index.soft_deletes.retention_lease.sync_interval': '1s' };

const progress = (m: string) => process.stderr.write(`eval: ${m}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);
const scaled = (n: number) => Math.max(1, Math.round(n * SCALE));

function scripts() {
  return [
    w1Project({ seed: SEED, start: START, streams: scaled(6), weeks: 6 }),
    w2Policies({ seed: SEED + 1, start: START, policies: scaled(4), versions: 4, days: 60 }),
    w3Tenants({ seed: SEED + 2, start: START, tenants: scaled(3), principals: 3, topics: 4 }),
    w4Regulated({ seed: SEED + 3, start: START, patients: scaled(6), erasures: scaled(2) }),
  ];
}

async function evaluate(system: EvalSystem, all: ReturnType<typeof scripts>): Promise<SystemRun> {
  const before = await system.storedBytes();
  const replays = new Map();
  for (const script of all) replays.set(script.workload, await replay(script, system, BUDGETS, MAIN_BUDGET, progress));
  const after = await system.storedBytes();
  const events = all.reduce((n, s) => n + s.events.length, 0);
  const bytesPerEvent =
    typeof before === 'number' && typeof after === 'number'
      ? (after - before) / events
      : typeof before === 'number'
        ? (after as { reason: string })
        : before;
  // W4: every erasure, then the probes for every erased subject's canaries; the other patients' must stay.
  const w4 = all.find((s) => s.workload === 'W4')!;
  const erasure = { canaries: 0, before: 0, store: 0, index: 0, context: 0, anywhere: 0, keptControls: '' };
  // Before: the probes must find what the erasure is to remove, or finding nothing afterwards would prove nothing.
  for (const [i, request] of w4.erasures.entries()) {
    const found = await system.probe(request.tenant, canariesOf(w4, request.subject), askOf(w4.probes[i]!));
    erasure.before += new Set([...found.store, ...found.index, ...found.context]).size;
  }
  for (const request of w4.erasures) {
    const started = performance.now();
    await system.erase(request.tenant, request.subject);
    progress(`${system.name}: erased ${request.subject} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const erasedSubjects = w4.erasures.map((e) => e.subject);
  for (const [i, request] of w4.erasures.entries()) {
    const canaries = canariesOf(w4, request.subject);
    const found = await system.probe(request.tenant, canaries, askOf(w4.probes[i]!));
    erasure.canaries += canaries.length;
    erasure.store += found.store.size;
    erasure.index += found.index.size;
    erasure.context += found.context.size;
    erasure.anywhere += new Set([...found.store, ...found.index, ...found.context]).size;
  }
  const controls = w4.events
    .filter((e) => e.canary && !e.derivedFrom && !erasedSubjects.some((s) => e.subjects.includes(s)))
    .map((e) => e.canary!);
  const kept = await system.probe(w4.events[0]!.tenant, controls, askOf(w4.probes[0]!));
  erasure.keptControls = `${kept.store.size}/${controls.length}`;
  return { name: system.name, replays, erasure, bytesPerEvent, refusals: system.refusals ?? [] };
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadStart = loadAverage();
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_eval`;
  const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env, MONGODB_URI: uri.toString() });
  // Lethe as users run it (the derivation audit as configured: `enforce` unless set), and with the audit in `record`
  // mode (verdicts kept, not acted on), so that the audit's part in the figures shows.
  const modes = [config.derivation.mode, ...(config.derivation.mode === 'record' ? [] : ['record' as const])];
  const lethes = modes.map((mode) => {
    const runtime = createRuntime(
      mode === config.derivation.mode
        ? config
        : loadConfig({ LOG_LEVEL: 'warn', ...process.env, MONGODB_URI: uri.toString(), LETHE_DERIVATION_AUDIT: mode }),
      'lethe-bench',
    );
    const taskQueue = benchName(`eval-${mode}`);
    return {
      mode,
      runtime,
      taskQueue,
      services: createServices(runtime, { taskQueue, indexSettings: INDEX_SETTINGS }),
    };
  });
  const embedder = createEmbedder(config.embedder);
  const all = scripts();
  progress(
    `scale ${SCALE}, seed ${SEED}: ${all.map((s) => `${s.workload} ${s.events.length} events, ${s.questions.length} questions, ${s.probes.length} probes`).join('; ')}`,
  );
  let connection: NativeConnection | undefined;
  const runs: SystemRun[] = [];
  try {
    for (const l of lethes) {
      await l.services.ensureIndexes();
      await l.services.lineage.ensureIndexes();
    }
    const workflowBundle = await bundleWorkflows();
    connection = await NativeConnection.connect({ address: config.temporal.address });
    const systems: EvalSystem[] = [
      ...lethes.map((l, i) =>
        createLetheSystem(l.runtime, l.services, {
          name: i === 0 ? `Lethe (derivation audit ${l.mode})` : `Lethe, derivation audit ${l.mode}`,
          label: l.mode.slice(0, 3),
          k: K,
          erasure: { taskQueue: l.taskQueue, connection: connection!, workflowBundle, progress },
        }),
      ),
      createBasicRag(embedder, K),
      createWindowSummary(),
    ];
    for (const system of systems) {
      progress(`${system.name} (load ${loadAverage()})`);
      try {
        runs.push(await evaluate(system, all));
      } finally {
        await system.close();
      }
    }
  } finally {
    await connection?.close().catch(() => undefined);
    await lethes[0]!.runtime.db
      .dropDatabase()
      .catch((e: unknown) => progress(`drop database: ${(e as Error).message}`));
    for (const l of lethes) await l.runtime.close();
  }
  await report(all, runs, { started, loadStart, embedder: `${embedder.model} (${embedder.dims}-d)` });
}

async function report(
  all: ReturnType<typeof scripts>,
  runs: SystemRun[],
  meta: { started: number; loadStart: string; embedder: string },
): Promise<void> {
  const date = new Date();
  const day = date.toISOString().slice(0, 10);
  const wallS = (performance.now() - meta.started) / 1000;
  const rows = runs.map((r) => cells(rowOf(r, MAIN_BUDGET)));
  const table1 = markdownTable(HEADER, [
    ...rows,
    ...NOT_RUN.map(([name, why]) => [name, ...HEADER.slice(1).map((_, i) => (i === 0 ? why : '—'))]),
  ]);
  const workloads = ['W1', 'W2', 'W3'];
  const breakdown = markdownTable(
    ['system', ...workloads.flatMap((w) => BUDGETS.map((b) => `${w} recall @${b}`))],
    runs.map((r) => [
      r.name,
      ...workloads.flatMap((w) =>
        BUDGETS.map((b) => {
          const a = r.replays.get(w)!.answers.filter((x) => x.budget === b);
          return `${((100 * a.filter((x) => x.score.recalled).length) / Math.max(1, a.length)).toFixed(1)} %`;
        }),
      ),
    ]),
  );
  const erasure = markdownTable(
    [
      'system',
      'erased canaries',
      'found before the erasure',
      'found in records',
      'found in index',
      'found in a served context',
      'found anywhere',
      'other patients’ records kept',
    ],
    runs.map((r) => [
      r.name,
      String(r.erasure.canaries),
      String(r.erasure.before),
      String(r.erasure.store),
      String(r.erasure.index),
      String(r.erasure.context),
      String(r.erasure.anywhere),
      r.erasure.keptControls,
    ]),
  );
  const refused = runs
    .filter((r) => r.refusals.length > 0)
    .map((r) => {
      const byWorkload = new Map<string, number>();
      for (const x of r.refusals)
        byWorkload.set(x.eventId.split('-')[0]!, (byWorkload.get(x.eventId.split('-')[0]!) ?? 0) + 1);
      return (
        `${r.name} refused ${r.refusals.length} writes (${[...byWorkload].map(([w, n]) => `${w.toUpperCase()}: ${n}`).join(', ')}); ` +
        `the first: ${r.refusals[0]!.message} A refused memory was left out and the rest of its batch written again.`
      );
    });
  const svgName = `${day}-pareto.svg`;
  const barsName = `${day}-metrics.svg`;
  const sizes = all
    .map(
      (s) =>
        `${s.workload}: ${s.events.length} events, ${s.questions.length} questions, ${s.probes.length} probes, ${s.erasures.length} erasures`,
    )
    .join('; ');
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const text = [
    `# Evaluation, ${day}`,
    '',
    `Command: \`npm run eval\` (LETHE_EVAL_SCALE=${SCALE}, LETHE_EVAL_SEED=${SEED}). Run ${date.toISOString()}, wall ${wallS.toFixed(0)} s, ` +
      `${os.cpus().length} cores, load average (os.loadavg) at the start ${meta.loadStart}, at the end ${load}.`,
    '',
    `Workloads (seeded scripts, expected answers folded from their events): ${sizes}. Embedder: ${meta.embedder}, the same for ` +
      `Lethe's index and B3's. Context budget ${MAIN_BUDGET} tokens in Table 1 (the picture: ${BUDGETS.join(', ')}), k = ${K} for ` +
      `Lethe and B3; tokens are counted with one estimate for every system (\`estimateTokens\`: ≈ 4 characters a token, ` +
      `at least one per word). W5 (poisoning): not run here — its scenario (\`npm run bench:poisoning\`) scores Lethe's ` +
      'admission alone and has no adapter for the baselines yet.',
    '',
    '## Table 1',
    '',
    table1,
    '',
    '¹ Task success and preference consistency need a generator (an answer to judge); this evaluation stops at the ' +
      'retrieved context, so they are not measured.',
    '',
    'Definitions (all at the retrieved-context level). Fact recall: questions whose context holds the event stating ' +
      'the value in force at the asked time (the current one, or the one at the date asked about). Stale: the context ' +
      'holds another value of the same fact that the system does not mark as out of force at the asked time (Lethe ' +
      'marks an item by its valid time; the baselines mark nothing, so any other value counts). Temporal ' +
      'correctness: recalled and not stale. Leaking probes: red-team queries whose context holds an item of another ' +
      'tenant, or another principal’s private item. Deletion completeness: canaries of erased subjects (their ' +
      'records and the digests derived from them) found by no probe (records, index, a served context). p95: wall ms ' +
      'of one question, embedding included, in this process (Lethe: the retrieval service against the local stack; ' +
      'B3 and B2: in memory). Storage: bytes added per event written (Lethe: the database’s data and index sizes and ' +
      'the search indices’ store, audit and lineage included; B3: the events as JSON and their vectors; B2: the events).',
    '',
    ...(refused.length > 0 ? ['## Refused writes', '', ...refused, ''] : []),
    '## Fact recall per workload and budget',
    '',
    breakdown,
    '',
    '## Erasure probes (W4)',
    '',
    erasure,
    '',
    `## Recall against context tokens`,
    '',
    `![fact recall against context tokens](${svgName})`,
    '',
    '## Each metric, side by side',
    '',
    `![Table 1's shares per system](${barsName})`,
    '',
  ].join('\n');
  const dir = path.join(process.cwd(), 'docs', 'eval');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${day}.md`);
  // Formatted as the repository's checks want it, so that committing the results needs no other step.
  fs.writeFileSync(file, await prettier.format(text, { ...(await prettier.resolveConfig(file)), filepath: file }));
  fs.writeFileSync(
    path.join(dir, svgName),
    paretoSvg(runs.map((r) => ({ name: r.name, points: pointsOf(r, BUDGETS) }))),
  );
  fs.writeFileSync(path.join(dir, barsName), metricBarsSvg(runs.map((r) => rowOf(r, MAIN_BUDGET))));
  out(text);
  progress(`wrote docs/eval/${day}.md, docs/eval/${svgName} and docs/eval/${barsName}`);
}

await runBench(main);
