/**
 * Reliability: a server the erasure depends on fails while one of its steps runs. Every server of the stack
 * (FerretDB, the PostgreSQL under it that holds the data, Elasticsearch, Temporal's dev server, the SMTP server,
 * the KMS that holds the key-encryption keys) is faulted in every step, at least once: paused (SIGSTOP), stopped
 * (its own shutdown) or killed (SIGKILL, no shutdown), and started again by the stack's own start, same port and
 * data. The step's activity is held at its start while the fault goes in. Where the step calls the server, the
 * fault must land: it lasts until the workflow's history shows the activity failed or retried, with a failure that
 * names the server (a fault the step got through untouched is injected again into a new request). Where the step
 * does not call it, the step must go through the whole fault on its first attempt. Then the request either
 * completes with a certificate whose probes all found nothing, or waits in needs-operator with the operator
 * e-mailed and the runbook named, and completes on the runbook's retry. It never fails and never runs on forever,
 * and nothing of the subject is readable afterwards.
 *
 * These tests stop the servers of the stack they run on: they run alone (`npm run test:reliability`), never in
 * `npm test`. `LETHE_RELIABILITY=reduced` runs one of three slices of the matrix in turn, each faulting every step
 * with a fault that must land; otherwise the whole matrix runs. Each cell's last result goes
 * to `fault-matrix.json`, which the table in docs/reliability.md is rendered from.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { loadStackConfig } from '../../stack/stack-config.js';
import { waitForMessage } from '../../stack/smtp/mailbox.js';
import type { ErasureRequest } from '../../src/governance/erasure/erasure-request.js';
import { erasureWorkflowId } from '../../src/temporal/erasure-gateway.js';
import { mapBounded } from '../../src/substrate/mongo/collections.js';
import { startTestApp, uniqueTenant, type TestApp } from '../support/app.js';
import { fileErasure } from '../support/erasure-fixture.js';
import { stepGate } from '../support/step-gate.js';
import { writeCodewordSubject } from '../support/codeword-subject.js';
import { activityAttempts, type ActivityAttempts } from '../support/activity-attempts.js';
import { serverUnderTest, type FaultyServer, type ServerUnderTest } from '../support/server-faults.js';
import { bounded, diagnose } from '../support/paused-server-reads.js';
import { recordCell } from '../../scripts/fault-matrix.js';
import { testConfig } from '../support/harness.js';

process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';

const stack = loadStackConfig();
const RUNBOOK = 'runbooks/stuck-erasure.md';

/** Memories of the subject, each extracted from an event of its own: a closure of 400 records. */
const MEMORIES = 200;
/**
 * How long a fault may last while the step has not yet failed: past the store-write profile's start-to-close
 * timeout (2 min), which is what ends an attempt hung on a paused store when no client timeout does.
 */
const LAND_WITHIN_MS = 150_000;
/**
 * Temporal's server is down this long: past the long profile's heartbeat timeout (30 s), so an attempt whose
 * heartbeats and completion went nowhere is timed out and retried once the server is back.
 */
const TEMPORAL_DOWN_MS = 40_000;
/** A fault the step got through untouched is injected again, into a new request, this many times in all. */
const MAX_INJECTIONS = 3;
/** From the end of the fault to completed or needs-operator: the long profile's whole retry budget, and more. */
const SETTLE_MS = 8 * 60_000;
/** From the operator's retry to completed. */
const AFTER_RETRY_MS = 5 * 60_000;

type Step =
  'locate' | 'closure' | 'authorise' | 'tombstone' | 'purge' | 'expunge' | 'compact' | 'verify' | 'certify' | 'notify';
type Fault = 'pause' | 'restart' | 'kill';

/** The activity that runs each step (notify: the DPO's e-mail that the erasure completed). */
const ACTIVITY_OF: Record<Step, string> = {
  locate: 'locateTargets',
  closure: 'computeClosure',
  authorise: 'authoriseAndCheckHolds',
  tombstone: 'markDeletedAndTombstone',
  purge: 'purgeRecords',
  expunge: 'expungeIndex',
  compact: 'compactStores',
  verify: 'verifyErasure',
  certify: 'issueCertificate',
  notify: 'notifyDpo',
};
const ERASURE_STEPS = [
  'locate',
  'closure',
  'authorise',
  'tombstone',
  'purge',
  'expunge',
  'compact',
  'verify',
  'certify',
];

interface Scenario {
  server: FaultyServer;
  fault: Fault;
  step: Step;
  /**
   * Whether the step calls the server. A step that does must fail or retry on the fault, naming the server; one
   * that does not must get through the whole fault on its first attempt. Either way a wrong entry fails the cell.
   */
  calls: boolean;
}

/**
 * The full matrix, as server/fault/step. Every step once with the document store restarted (FerretDB, or the
 * PostgreSQL under it), the index restarted in every step that calls it, each store paused in two steps (a pause
 * ends an attempt only by a timeout: a client's, the heartbeat's, or start-to-close), Temporal restarted in three
 * long steps, SMTP stopped before the notification. PostgreSQL is paused only in short steps: in a long one
 * (closure) FerretDB still answers the driver's heartbeat and the activity's heartbeat runs on a timer, so the
 * attempt stalls, unfailed, until the store resumes or the 30-minute start-to-close.
 */
const MATRIX = [
  'ferretdb/restart/locate',
  'postgres/restart/closure',
  'postgres/restart/authorise',
  'ferretdb/restart/authorise',
  'ferretdb/restart/tombstone',
  'postgres/restart/purge',
  'ferretdb/restart/expunge',
  'postgres/restart/compact',
  'postgres/restart/verify',
  'ferretdb/restart/certify',
  'elasticsearch/restart/tombstone',
  'elasticsearch/restart/purge',
  'elasticsearch/restart/expunge',
  'elasticsearch/restart/verify',
  'ferretdb/pause/purge',
  'ferretdb/pause/verify',
  'postgres/pause/locate',
  'postgres/pause/authorise',
  'elasticsearch/pause/purge',
  'elasticsearch/pause/verify',
  'temporal/restart/closure',
  'temporal/restart/purge',
  'temporal/restart/verify',
  'smtp/restart/notify',
  // Killed (SIGKILL, no shutdown) where nothing above faults that server in that step.
  'ferretdb/kill/closure',
  'ferretdb/kill/compact',
  'postgres/kill/tombstone',
  'postgres/kill/expunge',
  'postgres/kill/certify',
  'elasticsearch/kill/locate',
  'elasticsearch/kill/closure',
  'elasticsearch/kill/authorise',
  'elasticsearch/kill/compact',
  'elasticsearch/kill/certify',
  'temporal/kill/locate',
  'temporal/kill/authorise',
  'temporal/kill/tombstone',
  'temporal/kill/expunge',
  'temporal/kill/compact',
  'temporal/kill/certify',
  // The KMS that holds the key-encryption keys, in every step.
  'kms/kill/locate',
  'kms/kill/closure',
  'kms/kill/authorise',
  'kms/kill/tombstone',
  'kms/restart/purge',
  'kms/kill/expunge',
  'kms/kill/compact',
  'kms/pause/verify',
  'kms/kill/certify',
  // The SMTP server, in every step: only the notifications call it.
  ...ERASURE_STEPS.map((step) => `smtp/kill/${step}`),
] as const;

/**
 * The cells whose step does not call the server: the step must go through the fault on its first attempt. The
 * index is not read to find, close over or authorise (MongoDB holds the records and their lineage), nor in the
 * compaction or the certificate; the KMS only by the marking and the purge, which open the records and seal the
 * probes' sentences under new data keys (the verification opens them, and the tenant's other contents, with keys
 * this worker already holds: a worker started since would call the KMS there, which `kms-outage.test.ts` covers);
 * the SMTP server only by the notifications.
 */
const UNTOUCHED = new Set<string>([
  'elasticsearch/kill/locate',
  'elasticsearch/kill/closure',
  'elasticsearch/kill/authorise',
  'elasticsearch/kill/compact',
  'elasticsearch/kill/certify',
  'kms/kill/locate',
  'kms/kill/closure',
  'kms/kill/authorise',
  'kms/kill/expunge',
  'kms/kill/compact',
  'kms/pause/verify',
  'kms/kill/certify',
  ...ERASURE_STEPS.map((step) => `smtp/kill/${step}`),
]);

/** Run by every reduced run: the notification's one cell. */
const EVERY_RUN = new Set<string>(['smtp/restart/notify']);

const ALL: Scenario[] = MATRIX.map((key) => {
  const [server, fault, step] = key.split('/') as [FaultyServer, Fault, Step];
  return { server, fault, step, calls: !UNTOUCHED.has(key) };
});
const MODE = process.env.LETHE_RELIABILITY === 'reduced' ? 'reduced' : 'full';
/**
 * The reduced form runs one slice of the matrix, in turn: `.ci/run` passes the commit count, so successive CI runs on
 * new commits take the slices in order, and every cell runs within ROTATION_SLICES runs.
 */
const ROTATION_SLICES = 3;
const ROTATION = Number(process.env.LETHE_RELIABILITY_ROTATION ?? '0') % ROTATION_SLICES;

/**
 * A cell's rough cost, to keep the slices even: Temporal down while a short step runs loses the step's completion,
 * which comes back only after its 2-minute start-to-close.
 */
const weightOf = (key: string) => (key.startsWith('temporal/') ? 4 : 1);

/**
 * The slice of each cell. Cells are dealt out step by step, the costliest first: those whose step calls the server
 * each to a slice that has none of that step yet (every step has at least three), so that every slice faults every
 * step with a fault that must land; the index's among them to the slices with the fewest of the index's so far, so
 * that every slice faults both stores; and each to the slice with the least cost so far.
 */
function dealSlices(keys: readonly string[]): Map<string, number> {
  const slices = new Map<string, number>();
  const load = Array<number>(ROTATION_SLICES).fill(0);
  const indexCells = Array<number>(ROTATION_SLICES).fill(0);
  const all = load.map((_, i) => i);
  const isIndex = (key: string) => key.startsWith('elasticsearch/') && !UNTOUCHED.has(key);
  const place = (key: string, among: number[]) => {
    const fewest = isIndex(key) ? Math.min(...among.map((i) => indexCells[i]!)) : 0;
    const candidates = isIndex(key) ? among.filter((i) => indexCells[i] === fewest) : among;
    const slice = candidates.reduce((best, i) => (load[i]! < load[best]! ? i : best));
    slices.set(key, slice);
    load[slice]! += weightOf(key);
    if (isIndex(key)) indexCells[slice]!++;
    return slice;
  };
  for (const step of ERASURE_STEPS) {
    const cells = keys
      .filter((key) => key.endsWith(`/${step}`) && !EVERY_RUN.has(key))
      .sort((a, b) => weightOf(b) - weightOf(a));
    const without = new Set(all);
    for (const key of cells.filter((k) => !UNTOUCHED.has(k)))
      without.delete(place(key, without.size ? [...without] : all));
    for (const key of cells.filter((k) => UNTOUCHED.has(k))) place(key, all);
  }
  return slices;
}
const SLICE_OF = dealSlices(MATRIX);
const inSlice = (key: string, slice: number) => EVERY_RUN.has(key) || SLICE_OF.get(key) === slice;
const keyOf = (s: Scenario) => `${s.server}/${s.fault}/${s.step}`;
const SCENARIOS = MODE === 'reduced' ? ALL.filter((s) => inSlice(keyOf(s), ROTATION)) : ALL;
const SERVER_NAME: Record<FaultyServer, string> = {
  elasticsearch: 'Elasticsearch',
  ferretdb: 'FerretDB',
  postgres: 'PostgreSQL',
  temporal: 'Temporal',
  smtp: 'SMTP',
  kms: 'the KMS',
};

/**
 * How each server's failure reads in an activity's failure: a client error that names it (the MongoDB driver for
 * FerretDB, and for the PostgreSQL under it, whose failures FerretDB answers as server errors; the search index
 * adapter; the mail transport), or, for Temporal, the attempt timing out while the server could not hear it. A call
 * hung on a paused server may instead end by its attempt's own timeout.
 */
const FAILURE_NAMING: Record<FaultyServer, RegExp> = {
  elasticsearch: /search index|elasticsearch|ConnectionError|TimeoutError|ResponseError/i,
  ferretdb: /Mongo|PoolCleared/,
  // Through FerretDB, or directly: the compaction reads the snapshot horizon from PostgreSQL itself.
  postgres: /Mongo|DatabaseError|ECONNREFUSED|ECONNRESET|Connection terminated|Query read timeout/,
  temporal: /Heartbeat timeout|StartToClose timeout/i,
  smtp: /ESOCKET|ECONNREFUSED|ECONNRESET|ETIMEDOUT|SMTP/i,
  kms: /key service \(aws-kms\) is unavailable/,
};

function namesFault(s: Scenario, failure: string): boolean {
  return FAILURE_NAMING[s.server].test(failure) || (s.fault === 'pause' && /timeout/i.test(failure));
}

/** How each fault reads in the table, and in a test's title (SMTP's restart is a stop before the notification). */
const FAULT_WORDS: Record<Fault, { table: string; title: string }> = {
  pause: { table: 'paused', title: 'paused (SIGSTOP)' },
  restart: { table: 'restarted', title: 'restarted' },
  kill: { table: 'killed', title: 'killed (SIGKILL)' },
};
const faultWords = (s: Scenario) =>
  s.server === 'smtp' && s.fault === 'restart' ? { table: 'stopped', title: 'stopped' } : FAULT_WORDS[s.fault];

function faultName(s: Scenario): string {
  return `${SERVER_NAME[s.server]} ${faultWords(s).table}`;
}

function titleOf(s: Scenario): string {
  return `${SERVER_NAME[s.server]} ${faultWords(s).title} mid-${s.step}`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Where a fault went: into the step (its activity failed or retried), past it (it completed untouched), or not yet. */
function landing(attempts: ActivityAttempts): 'landed' | 'missed' | undefined {
  if (attempts.retried > 0 || attempts.failed > 0) return 'landed';
  if (attempts.firstCompletedAttempt === 1) return 'missed';
  return undefined;
}

/**
 * Holds the first attempt of one activity of one request at its start, until the test has put the fault in.
 * Every other activity (other tenants', later attempts, later rounds) passes.
 */
class FaultGate {
  private armed: { tenant: string; activity: string; reached: () => void; release: Promise<void> } | undefined;
  private open: (() => void) | undefined;

  readonly interceptor = stepGate(async (activityType, input) => {
    const armed = this.armed;
    if (!armed || input.tenant !== armed.tenant || activityType !== armed.activity) return;
    if (Context.current().info.attempt !== 1) return;
    this.armed = undefined;
    armed.reached();
    await armed.release;
  });

  /** Arms the gate; resolves once the activity is held (its attempt 1 has started on the worker). */
  arm(tenant: string, activity: string): Promise<void> {
    this.release();
    return new Promise((reached) => {
      const release = new Promise<void>((resolve) => (this.open = resolve));
      this.armed = { tenant, activity, reached, release };
    });
  }

  release(): void {
    this.armed = undefined;
    this.open?.();
    this.open = undefined;
  }
}

interface Row {
  scenario: string;
  fault: string;
  step: Step;
  activity: string;
  injections: number;
  outcome: string;
  attempts: number;
  failures: string[];
  faultSeconds: number;
  totalSeconds: number;
}

function table(rows: Row[]): string {
  const lines = [
    '| fault | step | outcome | attempts | fault lasted | scenario took | first failure |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.fault} | ${r.step} (${r.activity}) | ${r.outcome} | ${r.attempts} | ${r.faultSeconds} s | ${r.totalSeconds} s | ${(r.failures[0] ?? '').replace(/\|/g, '/').slice(0, 70)} |`,
    ),
  ];
  return lines.join('\n');
}

describe(`erasure under server faults (${MODE}: ${SCENARIOS.length} scenarios)`, () => {
  let app: TestApp;
  const database = new URL(testConfig().mongo.uri);
  database.pathname = `/lethe_reliability_${randomUUID().slice(0, 8)}`;
  const gate = new FaultGate();
  const servers = Object.fromEntries(
    (['elasticsearch', 'ferretdb', 'postgres', 'temporal', 'smtp', 'kms'] as const).map((name) => [
      name,
      serverUnderTest(name),
    ]),
  ) as Record<FaultyServer, ServerUnderTest>;
  /** Heals PostgreSQL before FerretDB, whose start needs it. */
  const healAll = async () => {
    gate.release();
    for (const name of ['postgres', 'ferretdb', 'elasticsearch', 'temporal', 'smtp', 'kms'] as const) {
      await servers[name].heal();
    }
  };
  /** The request of the scenario running now, terminated after it unless it completed. */
  let open: { handle: WorkflowHandle; completed: boolean } | undefined;
  const rows: Row[] = [];
  /** The scenario under way, whose cell `afterEach` records. */
  let running: Scenario | undefined;

  beforeAll(async () => {
    // Faults go only into servers the stack started; a server someone else runs cannot be paused here.
    for (const server of Object.values(servers)) {
      server.pid();
      expect(await server.healthy(), `${server.name} answers before the suite`).toBe(true);
    }
    // Content sealed under the stack's KMS, as in production, in a database of the suite's own: a KMS fault then
    // reaches whichever step opens sealed content.
    app = await startTestApp({
      activityInterceptors: [gate.interceptor],
      config: {
        MONGODB_URI: database.toString(),
        LETHE_KMS: 'aws-kms',
        LETHE_AWS_KMS_REGION: 'eu-west-1',
        LETHE_AWS_KMS_ENDPOINT: stack.kms.url,
        LETHE_AWS_KMS_ALIAS_PREFIX: `alias/lethe-reliability-${randomUUID().slice(0, 8)}`,
        LETHE_AWS_KMS_TIMEOUT_MS: '2000',
      },
    });
  });

  afterEach(async (context) => {
    // Whatever happened, the servers are left running and answering.
    await healAll();
    // The cell's last result, for the table in docs/reliability.md: a pass as its row says, a failure as failed.
    if (running) {
      const row = rows.find((r) => r.scenario === keyOf(running!));
      recordCell({
        scenario: keyOf(running),
        fault: faultName(running),
        step: `${running.step} (${ACTIVITY_OF[running.step]})`,
        outcome: row && context.task.result?.state !== 'fail' ? row.outcome : 'failed',
        attempts: row?.attempts ?? null,
        faultSeconds: row?.faultSeconds ?? null,
        totalSeconds: row?.totalSeconds ?? null,
        firstFailure: row?.failures[0] ?? '',
        date: new Date().toISOString().slice(0, 10),
        mode: MODE,
      });
      running = undefined;
    }
    if (open && !open.completed) await open.handle.terminate('reliability test cleanup').catch(() => undefined);
    open = undefined;
  });

  afterAll(async () => {
    await healAll();
    await app?.runtime.db.dropDatabase().catch(() => undefined);
    await app?.close();
    console.log(
      `reliability (${MODE}, ${new Date().toISOString().slice(0, 10)}): faults × steps × outcome\n\n${table(rows)}\n`,
    );
  });

  it('the rotation runs every cell of the matrix within three reduced runs, and this run its slice', () => {
    const slice = MATRIX.filter((key) => inSlice(key, ROTATION));
    console.log(`reliability rotation ${ROTATION} of ${ROTATION_SLICES}: ${slice.join(', ')}`);
    const covered = Array.from({ length: ROTATION_SLICES }, (_, r) => MATRIX.filter((key) => inSlice(key, r)));
    expect(new Set(covered.flat())).toEqual(new Set(MATRIX));
    expect(Number.isInteger(ROTATION)).toBe(true);
  });

  it('the matrix faults every server of the stack in every erasure step', () => {
    const missing = Object.keys(servers).flatMap((server) =>
      ERASURE_STEPS.filter((step) => !ALL.some((s) => s.server === server && s.step === step)).map(
        (step) => `${server}/${step}`,
      ),
    );
    expect(missing).toEqual([]);
  });

  it('every reduced run faults every erasure step with a fault that must land, in both stores', () => {
    for (let r = 0; r < ROTATION_SLICES; r++) {
      const landing = ALL.filter((s) => s.calls && inSlice(keyOf(s), r));
      expect(
        ERASURE_STEPS.filter((step) => !landing.some((s) => s.step === step)),
        `slice ${r}`,
      ).toEqual([]);
      expect(
        landing.some((s) => s.server === 'elasticsearch'),
        `slice ${r}`,
      ).toBe(true);
      expect(
        landing.some((s) => s.server === 'ferretdb' || s.server === 'postgres'),
        `slice ${r}`,
      ).toBe(true);
    }
  });

  for (const scenario of SCENARIOS) {
    const label = titleOf(scenario);
    const activity = ACTIVITY_OF[scenario.step];
    const server = servers[scenario.server];

    const expected = scenario.calls
      ? "the step fails or retries, and the request completes (or waits for an operator and completes on the runbook's retry)"
      : 'the step, which does not call it, goes through untouched, and the request completes';
    it(`${label}: ${expected}`, async () => {
      const began = Date.now();
      const elapsed = (since = began) => Math.round((Date.now() - since) / 100) / 10;
      running = scenario;

      for (let injection = 1; ; injection++) {
        const tenant = uniqueTenant();
        const canary = `CANARY-${randomUUID()}`;
        const keep = `KEEP-${randomUUID()}`;
        const subject = 'subject-under-fault';
        const agent = await app.token(tenant, ['agent']);
        const dpo = await app.token(tenant, ['dpo'], 'dpo-1');

        // A subject of hundreds of records, and one other subject's event and memory that must survive.
        await app.services.index.ensureTenantIndex(tenant);
        const { eventIds, memoryIds, control } = await writeCodewordSubject(app, {
          tenant,
          token: agent,
          subject,
          canary,
          keep,
          count: MEMORIES,
        });
        const controlMemory = control.memoryId;

        // The step's activity is held at its start; the fault goes in while it is held.
        const held = gate.arm(tenant, activity);
        const requestId = await fileErasure(app, tenant, { subjectId: subject });
        const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(tenant, requestId));
        open = { handle, completed: false };
        const current = async () => (await bounded(app.services.erasureRequests.get(tenant, requestId))) ?? undefined;
        const reached = await bounded(
          held.then(() => true),
          180_000,
        );
        if (!reached)
          throw new Error(
            `[${label}] the ${scenario.step} step did not start within 180 s:\n${await diagnose(handle)}`,
          );

        const faultAt = Date.now();
        /** Polls the history until the fault landed in the step or the step got through it. */
        const watch = async (withinMs: number) => {
          for (const deadline = Date.now() + withinMs; ;) {
            const attempts = await bounded(activityAttempts(handle, activity));
            const where = attempts && landing(attempts);
            if (where || Date.now() > deadline) return where;
            await sleep(250);
          }
        };
        let where: 'landed' | 'missed' | undefined;
        try {
          if (scenario.fault === 'pause') await server.pause();
          else if (scenario.fault === 'kill') await server.kill();
          else await server.stop();
          gate.release();
          if (scenario.server === 'temporal') {
            // Nothing can be read from a stopped Temporal: it stays down for a fixed while, then is asked.
            await sleep(TEMPORAL_DOWN_MS);
          } else {
            where = await watch(LAND_WITHIN_MS);
          }
        } finally {
          gate.release();
          await server.heal();
        }
        const faultSeconds = elapsed(faultAt);
        if (scenario.server === 'temporal') where = await watch(LAND_WITHIN_MS);
        const landedAttempts = await activityAttempts(handle, activity);
        console.log(
          `[${label}] injection ${injection}: ${where ?? 'undecided'} after ${faultSeconds} s ` +
            `(${activity}: attempt ${landedAttempts.maxAttempt}, ${landedAttempts.failures[0] ?? 'no failure'})`,
        );
        if (!scenario.calls) {
          // The step does not call the server: it must have finished on its first attempt, the server down throughout.
          if (where !== 'missed') {
            throw new Error(
              `[${label}] ${activity} is listed as not calling ${SERVER_NAME[scenario.server]}, but ${where === 'landed' ? `failed or retried on the fault (${landedAttempts.failures[0] ?? '?'})` : 'did not finish while the fault lasted'}:\n${await diagnose(handle)}`,
            );
          }
        } else if (where === undefined) {
          // Neither failed nor finished: the step stalled on the fault, and injecting it again cannot change that.
          throw new Error(
            `[${label}] ${activity} stalled: its first attempt neither failed nor finished in ${LAND_WITHIN_MS / 1000} s of the fault:\n${await diagnose(handle)}`,
          );
        }
        if (scenario.calls && where === 'missed') {
          if (injection < MAX_INJECTIONS) {
            // The step got through the fault untouched: inject it again, into a request of its own.
            await handle.terminate('the fault missed its step; injecting it again').catch(() => undefined);
            open = undefined;
            continue;
          }
          throw new Error(
            `[${label}] the fault never made ${activity} fail or retry in ${MAX_INJECTIONS} injections:\n${await diagnose(handle)}`,
          );
        }

        // Either completed or needs-operator: never failed, never running on.
        const settle = async (
          states: ErasureRequest['state'][],
          timeoutMs: number,
          what: string,
        ): Promise<ErasureRequest> => {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const status = (await bounded(handle.describe()))?.status.name ?? 'RUNNING';
            if (status !== 'RUNNING' && status !== 'COMPLETED') {
              throw new Error(`[${label}] the erasure workflow ended ${status} ${what}:\n${await diagnose(handle)}`);
            }
            const r = await current();
            if (r && states.includes(r.state)) return r;
            if (r && !['received', 'running', 'needs-operator', 'completed'].includes(r.state)) {
              throw new Error(
                `[${label}] the request is ${r.state} ${what} (note: ${r.operatorNote}):\n${await diagnose(handle)}`,
              );
            }
            if (Date.now() > deadline) {
              throw new Error(
                `[${label}] the request is still ${r?.state ?? '(store not answering)'} ${Math.round(timeoutMs / 1000)} s ${what}` +
                  ` (note: ${r?.operatorNote}; steps: ${JSON.stringify(r?.steps.map((s) => `${s.step}:${s.state}`))}):\n${await diagnose(handle)}`,
              );
            }
            await sleep(500);
          }
        };
        let settled = await settle(['completed', 'needs-operator'], SETTLE_MS, 'after the fault');
        let viaOperator = false;

        if (settled.state === 'needs-operator') {
          // The operator was told, by e-mail naming the runbook; the audit says which step and error.
          viaOperator = true;
          expect(settled.operatorNote).toMatch(/^step \w+ failed \(\w+\)$/);
          const mail = await waitForMessage(
            stack.smtp.captureDir,
            (m) => m.subject.includes(requestId) && m.subject.includes('needs an operator'),
            60_000,
          );
          expect(mail.to).toContain(app.runtime.config.smtp.operatorEmail);
          expect(mail.text).toContain(RUNBOOK);
          expect(mail.text).not.toContain(canary);
          expect(fs.existsSync(path.join(stack.repoDir, RUNBOOK))).toBe(true);
          const escalations = [];
          for await (const entry of app.services.audit.entries(tenant)) {
            if (entry.action === 'erasure.needs-operator' && entry.target === requestId) escalations.push(entry);
          }
          expect(escalations.length).toBeGreaterThanOrEqual(1);

          // The runbook: bring the server back (done: every server answers), then retry.
          for (const s of Object.values(servers))
            expect(await s.healthy(), `${s.name} answers before the retry`).toBe(true);
          const retried = await app.request({
            method: 'POST',
            url: `/v1/tenants/${tenant}/erasure-requests/${requestId}/retry`,
            token: dpo,
          });
          expect(retried.statusCode, retried.body).toBe(202);
          settled = await settle(['completed'], AFTER_RETRY_MS, "after the operator's retry");
        }
        expect(settled.state).toBe('completed');
        expect(await handle.result()).toMatchObject({ state: 'completed', certificateIds: [expect.any(String)] });
        open.completed = true;
        if (scenario.step === 'notify') {
          // The notification the SMTP stop held back was sent once the server was back.
          const sent = await waitForMessage(
            stack.smtp.captureDir,
            (m) => m.subject.includes(requestId) && m.subject.includes('completed'),
            60_000,
          );
          expect(sent.text).not.toContain(canary);
        }

        const attempts = await activityAttempts(handle, activity);
        if (scenario.calls) {
          // The fault reached the step: its activity failed or was retried before the request completed...
          expect(attempts.retried + attempts.failed, `${activity} failed or retried`).toBeGreaterThan(0);
          // ...because of this fault: a failure of the step's activity names the faulted server.
          expect(
            attempts.failures.some((f) => namesFault(scenario, f)),
            `a failure of ${activity} names ${SERVER_NAME[scenario.server]}: ${JSON.stringify(attempts.failures)}`,
          ).toBe(true);
        } else {
          expect(attempts.retried + attempts.failed, `${activity} went through the fault untouched`).toBe(0);
          expect(attempts.firstCompletedAttempt).toBe(1);
        }
        expect(attempts.completed, `${activity} completed in the end`).toBeGreaterThan(0);
        rows.push({
          scenario: keyOf(scenario),
          fault: faultName(scenario),
          step: scenario.step,
          activity,
          injections: injection,
          outcome: !scenario.calls
            ? `not called → step untouched → completed`
            : viaOperator
              ? `failed (retries exhausted) → needs-operator → operator retry → recovered`
              : `retried → recovered`,
          attempts: attempts.maxAttempt,
          failures: attempts.failures,
          faultSeconds,
          totalSeconds: elapsed(),
        });
        console.log(`[${label}] ${JSON.stringify(rows.at(-1))}`);

        // The certificate: the whole closure, every probe found nothing, no deleted document left in the segments.
        const certificates = await app.services.certificates.byRequest(tenant, requestId);
        expect(certificates).toHaveLength(1);
        const certificate = certificates[0]!;
        expect(certificate.status).toBe('complete');
        expect(certificate.closure).toMatchObject({ located: 2 * MEMORIES, total: 2 * MEMORIES });
        expect(certificate.probes.length).toBeGreaterThan(0);
        expect(certificate.probes.filter((p) => p.found !== 0)).toEqual([]);
        expect(certificate.stores.find((s) => s.store === 'elasticsearch')).toMatchObject({ deletedDocsAfter: 0 });

        // Nothing of the subject readable: by id through the API and in each store, nor by the canary in search.
        const reads = await mapBounded(
          [...eventIds.map((id) => `events/${id}`), ...memoryIds.map((id) => `memories/${id}`)],
          8,
          async (p) =>
            [
              p,
              (await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/${p}`, token: agent })).statusCode,
            ] as const,
        );
        expect(reads.filter(([, code]) => code !== 404)).toEqual([]);
        expect(await app.services.memories.getMany(tenant, memoryIds)).toEqual([]);
        expect(await app.services.events.getMany(tenant, eventIds)).toEqual([]);
        expect((await app.services.index.probe(tenant, { ids: memoryIds, text: canary })).found).toEqual([]);
        const search = async (query: string) => {
          const response = await app.request({
            method: 'POST',
            url: `/v1/tenants/${tenant}/search`,
            token: agent,
            payload: { query, intent: 'history', k: 100 },
          });
          expect(response.statusCode, response.body).toBe(200);
          return response.json<{ results: { memory: { id: string; content: string } }[] }>().results;
        };
        // Hybrid search ranks the nearest vectors whatever the words: what it must not return is the subject.
        const hits = await search(canary);
        const closure = new Set([...eventIds, ...memoryIds]);
        expect(hits.filter((r) => closure.has(r.memory.id) || r.memory.content.includes(canary))).toEqual([]);
        // The same paths still serve the other subject: the 404s and the empty search are not an outage.
        expect((await search(keep)).map((r) => r.memory.id)).toContain(controlMemory);
        expect(
          (await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/memories/${controlMemory}`, token: agent }))
            .statusCode,
        ).toBe(200);
        return;
      }
    });
  }
});
