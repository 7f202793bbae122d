/**
 * Abuse benchmark: `npm run bench:abuse [-- --seconds N]` (or `LETHE_BENCH_SECONDS`; default 120).
 *
 * One Lethe process (the API on a real HTTP listener at 127.0.0.1, and a worker on the bench's own task queue,
 * with production defaults) serves an honest client in its own tenant: write a small batch, retrieve, and every
 * fifth loop erase a subject and wait for it. It runs SOLO for N seconds, then for N seconds more beside eight
 * hostile clients in a process of their own (bench/lib/hostile-clients.main.ts): request floods from one agent
 * token, the derivation verifier's worst case, batches as large as the body limit whose memory cites every event,
 * and unauthenticated or badly signed requests naming random tenants, the honest one among them.
 *
 * Printed: the honest client's p50/p95 per operation, solo vs under attack; activity timeouts on the bench's queue
 * (heartbeat and others, from the workflows' histories); the RSS of the Lethe process (API and worker share it) and
 * of the hostile clients' process, sampled every 5 s; audit entries added to the tenants the unauthenticated
 * floods named; the statuses the hostile clients got. Indices get the 1 s soft-delete lease sync the tests use, so
 * an erasure does not wait 30 s for it. A database of its own, dropped at the end. Tables to stdout, progress to
 * stderr.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime as TemporalRuntime } from '@temporalio/worker';
import { createRuntime } from '../app/runtime.js';
import { createServices } from '../app/services.js';
import { buildApiServer } from '../app/api/server.js';
import { loadConfig } from '../src/config/load-config.js';
import { mintToken } from '../src/governance/auth/tokens.js';
import { loadTokenKeys } from '../src/governance/auth/token-keys.js';
import { Collections } from '../src/substrate/mongo/collections.js';
import { bundleWorkflows, createLetheWorker } from '../app/worker/worker.js';
import { activityTimeoutsOn, type ActivityTimeouts } from '../test/support/activity-timeouts.js';
import { worstCaseEvidence } from '../test/support/verifier-worst-case.js';
import { event } from './lib/abuse-payloads.js';
import { send, type StatusTally } from './lib/abuse-http.js';
import { benchName, endRunningWorkflows, runBench } from './lib/bench-run.js';
import { ERASE_EVERY, runHonestClient, type HonestIdentity, type HonestTimings } from './lib/honest-client.js';
import { PLAN_ENV, type HostilePlan } from './lib/hostile-plan.js';
import { loadAverage, num, percentile, ratio, table } from './lib/stack-report.js';

const INDEX_SETTINGS = { 'index.soft_deletes.retention_lease.sync_interval': '1s' };
const RSS_EVERY_MS = 5000;
/** Events of the oversize batches: as many of the largest events as the 1 MiB body limit takes. */
const OVERSIZE_EVENTS = 30;
/** Tenants the unauthenticated floods name besides the honest one. */
const STRANGERS = 7;

const progress = (message: string) => process.stderr.write(`bench:abuse: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);
const load = loadAverage;

function seconds(): number {
  const at = process.argv.indexOf('--seconds');
  const raw = at >= 0 ? process.argv[at + 1] : process.env.LETHE_BENCH_SECONDS;
  const n = Number(raw ?? 120);
  if (!Number.isFinite(n) || n < 5) throw new Error(`bench:abuse: --seconds must be a number ≥ 5, not "${raw}"`);
  return n;
}

/** RSS of another process (Linux), in bytes; NaN where /proc cannot tell. */
function rssOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? Number(line[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

interface RssSamples {
  lethe: number[];
  clients: number[];
}

/** Samples RSS every 5 s (and at once) until stopped. */
function sampleRss(clientPid: () => number | undefined): { samples: RssSamples; stop(): void } {
  const samples: RssSamples = { lethe: [], clients: [] };
  const sample = () => {
    samples.lethe.push(process.memoryUsage().rss);
    const child = rssOf(clientPid());
    if (Number.isFinite(child)) samples.clients.push(child);
  };
  sample();
  const timer = setInterval(sample, RSS_EVERY_MS);
  return { samples, stop: () => clearInterval(timer) };
}

/** Runs the hostile clients' process until `plan.until`; its tally of statuses. */
function runHostileClients(plan: HostilePlan, started: (pid: number | undefined) => void): Promise<StatusTally> {
  const script = fileURLToPath(new URL('./lib/hostile-clients.main.ts', import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, script], {
    env: { ...process.env, [PLAN_ENV]: JSON.stringify(plan) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started(child.pid);
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as StatusTally);
      else reject(new Error(`hostile clients exited with ${code}`));
    });
  });
}

const mib = (bytes: number[]) =>
  bytes.length === 0 ? 'n/a' : `${num(Math.min(...bytes) / 2 ** 20)} – ${num(Math.max(...bytes) / 2 ** 20)}`;
const ms = (values: number[], p: number) => (values.length === 0 ? 'n/a' : num(percentile(values, p)));

function latencyRows(solo: HonestTimings, attacked: HonestTimings): string[][] {
  return (['write', 'retrieve', 'erasure'] as const).map((op) => [
    `${op}${op === 'erasure' ? ' (file → completed)' : ''}`,
    `${solo[op].length} / ${attacked[op].length}`,
    ms(solo[op], 50),
    ms(attacked[op], 50),
    ms(solo[op], 95),
    ms(attacked[op], 95),
    ratio(percentile(attacked[op], 95) / percentile(solo[op], 95)),
  ]);
}

const timeoutsText = (t: ActivityTimeouts) =>
  t.total === 0
    ? '0'
    : `${t.total} (${Object.entries(t.byType)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`;

async function main(): Promise<void> {
  const span = seconds();
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_bench_abuse`;
  // Errors only: a warning line for each refused request would bury the tables (LOG_LEVEL=warn shows them).
  const config = loadConfig({ LOG_LEVEL: 'error', ...process.env, MONGODB_URI: uri.toString() });
  const runtime = createRuntime(config, 'lethe-bench');
  const taskQueue = benchName('abuse');
  const services = createServices(runtime, { taskQueue, indexSettings: INDEX_SETTINGS });
  const tenants = {
    honest: benchName('honest'),
    flood: benchName('flood'),
    worstCase: benchName('worst-case'),
    oversize: benchName('oversize'),
    strangers: Array.from({ length: STRANGERS }, (_, i) => benchName(`stranger-${i}`)),
  };
  const ttl = Math.min(config.tokens.maxTtlSeconds, 2 * span + 3600);
  // The bench runs in development (HS256 tokens); production verifies EdDSA tokens against a JWKS.
  const secret = config.tokens.hs256Secret!;
  const agent = (tenant: string) => mintToken(secret, { id: 'bench-agent', tenant, roles: ['agent'] }, ttl);
  out(`## bench:abuse — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${load()}`);
  out(`MongoDB ${uri.toString()} · Temporal ${config.temporal.address} · Elasticsearch ${config.elasticsearch.url}`);
  out();
  progress('bundling the Lethe workflows');
  const bundle = await bundleWorkflows();
  await services.ensureIndexes();
  const worker = await createLetheWorker(runtime, { taskQueue, services, workflowBundle: bundle });
  const running = worker.run();
  const api = await buildApiServer({
    log: runtime.log,
    probes: runtime.probes,
    services,
    tokenKeys: loadTokenKeys(config.tokens),
    tokenLimits: config.tokens,
    // Production's limits as configured: the flood meets the rate limits users would.
    limits: config.limits,
  });
  try {
    const baseUrl = await api.listen({ host: '127.0.0.1', port: 0 });
    const honest: HonestIdentity = {
      baseUrl,
      tenant: tenants.honest,
      agentToken: await agent(tenants.honest),
      dpoToken: await mintToken(secret, { id: 'bench-dpo', tenant: tenants.honest, roles: ['dpo'] }, ttl),
    };

    // The worst case cites as much evidence as one audit reads; stored beforehand, as an attacker would.
    const worstToken = await agent(tenants.worstCase);
    const stored = await send(baseUrl, {
      method: 'POST',
      path: `/v1/tenants/${tenants.worstCase}/batches`,
      token: worstToken,
      body: { events: worstCaseEvidence(config.derivation.maxAuditBytes).map((c) => event('ana', c)) },
    });
    if (stored.status !== 201) throw new Error(`storing the worst case's evidence: ${stored.status}`);
    const evidenceIds = (JSON.parse(stored.body) as { events: { id: string }[] }).events.map((e) => e.id);

    progress(`warm-up (load ${load()})`);
    // One loop with an erasure: bundles, connections, the tenant's index, the verifier's threads.
    const warm = await runHonestClient(honest, 'warm', 0, ERASE_EVERY);
    if (warm.failures.length > 0) throw new Error(`warm-up: ${[...new Set(warm.failures)].join('; ')}`);

    progress(`solo: the honest client alone for ${span} s (load ${load()})`);
    const soloRss = sampleRss(() => undefined);
    const solo = await runHonestClient(honest, 'solo', Date.now() + span * 1000);
    soloRss.stop();
    const timeoutsSolo = await activityTimeoutsOn(services.temporalClient, taskQueue);

    const named = [tenants.honest, ...tenants.strangers];
    const headsBefore = await Promise.all(named.map(async (t) => (await services.audit.head(t))?.seq ?? 0));
    progress(`under attack: the honest client beside 8 hostile clients for ${span} s (load ${load()})`);
    const until = Date.now() + span * 1000;
    let clientPid: number | undefined;
    const attackRss = sampleRss(() => clientPid);
    const [tally, attacked] = await Promise.all([
      runHostileClients(
        {
          baseUrl,
          until,
          flood: { tenant: tenants.flood, token: await agent(tenants.flood) },
          worstCase: { tenant: tenants.worstCase, token: worstToken, subject: 'ana', evidenceIds },
          oversize: {
            tenant: tenants.oversize,
            token: await agent(tenants.oversize),
            subject: 'ana',
            events: OVERSIZE_EVENTS,
          },
          unauthenticated: {
            tenants: named,
            badToken: await mintToken(
              randomBytes(32).toString('base64url'),
              { id: 'mallory', tenant: tenants.honest, roles: ['agent', 'dpo', 'admin'] },
              ttl,
            ),
          },
        },
        (pid) => (clientPid = pid),
      ),
      runHonestClient(honest, 'attack', until),
    ]);
    attackRss.stop();
    progress(`reading histories and audit chains (load ${load()})`);
    const timeoutsAll = await activityTimeoutsOn(services.temporalClient, taskQueue);
    const added = await Promise.all(
      named.map(async (tenant, i) => {
        let all = 0;
        let notOk = 0;
        for await (const e of services.audit.entries(tenant, { fromSeq: headsBefore[i]! + 1 })) {
          all++;
          if (e.outcome !== 'ok') notOk++;
        }
        return { all, notOk };
      }),
    );
    const hostileVerdicts = await runtime.db
      .collection<{ tenant: string; status: string; derivation?: { label: string; unresolvedBecause?: string } }>(
        Collections.memories,
      )
      .find({ tenant: { $in: [tenants.worstCase, tenants.oversize] } })
      .project<{ tenant: string; status: string; derivation?: { label: string; unresolvedBecause?: string } }>({
        tenant: 1,
        status: 1,
        'derivation.label': 1,
        'derivation.unresolvedBecause': 1,
      })
      .toArray();

    out(
      `### The honest client, solo then beside 8 hostile clients (${span} s each, after a warm-up of ${ERASE_EVERY} loops and an erasure)`,
    );
    out();
    out(
      table(
        ['operation (ms)', 'n solo / attacked', 'p50 solo', 'p50 attacked', 'p95 solo', 'p95 attacked', 'p95 ratio'],
        latencyRows(solo, attacked),
      ),
    );
    out();
    out(
      `honest failures: solo ${solo.failures.length}${solo.failures.length ? ` (${[...new Set(solo.failures)].join('; ')})` : ''}, ` +
        `attacked ${attacked.failures.length}${attacked.failures.length ? ` (${[...new Set(attacked.failures)].join('; ')})` : ''}; ` +
        `an erasure every ${ERASE_EVERY} loops`,
    );
    out();
    out('### The worker and the process');
    out();
    out(
      table(
        ['measure', 'solo', 'attacked'],
        [
          [
            'activity timeouts on the bench queue (heartbeat and others)',
            timeoutsText(timeoutsSolo),
            timeoutsText({
              workflows: timeoutsAll.workflows - timeoutsSolo.workflows,
              total: timeoutsAll.total - timeoutsSolo.total,
              byType: Object.fromEntries(
                Object.entries(timeoutsAll.byType).map(([k, v]) => [k, v - (timeoutsSolo.byType[k] ?? 0)]),
              ),
            }),
          ],
          ['workflows read', String(timeoutsSolo.workflows), String(timeoutsAll.workflows - timeoutsSolo.workflows)],
          [
            'RSS of the Lethe process, API + worker (MiB, min – max)',
            mib(soloRss.samples.lethe),
            mib(attackRss.samples.lethe),
          ],
          ['RSS of the hostile clients process (MiB, min – max)', '—', mib(attackRss.samples.clients)],
        ],
      ),
    );
    out();
    out('### Audit entries added to the tenants the unauthenticated floods named, during the attack');
    out();
    out(
      table(
        ['tenant', 'entries added', 'of them not ok (refused/error)'],
        named.map((t, i) => [
          t === tenants.honest ? `${t} (the honest client's, which it writes to)` : t,
          String(added[i]!.all),
          String(added[i]!.notOk),
        ]),
      ),
    );
    out();
    out('### Statuses the hostile clients got');
    out();
    const statuses = [...new Set(Object.values(tally).flatMap((s) => Object.keys(s)))].sort();
    out(
      table(
        ['client (2 of each)', ...statuses.map((s) => (s === '0' ? 'no response' : s)), 'total'],
        Object.entries(tally).map(([kind, byStatus]) => [
          kind,
          ...statuses.map((s) => String(byStatus[Number(s)] ?? 0)),
          String(Object.values(byStatus).reduce((a, b) => a + b, 0)),
        ]),
      ),
    );
    out();
    const verdicts = new Map<string, number>();
    for (const m of hostileVerdicts) {
      const kind = m.tenant === tenants.worstCase ? 'worst-case' : 'oversize';
      const key = `${kind}: ${m.status}, ${m.derivation?.label ?? 'no audit'}${m.derivation?.unresolvedBecause ? ` (${m.derivation.unresolvedBecause})` : ''}`;
      verdicts.set(key, (verdicts.get(key) ?? 0) + 1);
    }
    out(
      `hostile memories admitted: ${[...verdicts].map(([k, n]) => `${k} × ${n}`).join('; ') || 'none'}; ` +
        `429s/401s/403s: ${[429, 401, 403].map((s) => Object.values(tally).reduce((n, t) => n + (t[s] ?? 0), 0)).join('/')}`,
    );
    out(`(load at the end: ${load()})`);
  } finally {
    await api.close();
    await endRunningWorkflows(services.temporalClient, taskQueue, 'bench:abuse', progress);
    worker.shutdown();
    await running;
    await Promise.allSettled(
      [tenants.honest, tenants.flood, tenants.worstCase, tenants.oversize].map((t) => services.index.dropTenant(t)),
    );
    await runtime.db.dropDatabase().catch((error: unknown) => progress(`drop failed: ${(error as Error).message}`));
    await runtime.close();
  }
}

// runBench exits when main is done: stray handles (verifier threads, pools, timers) do not keep the process alive.
await runBench(async () => {
  TemporalRuntime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
  await main();
});
