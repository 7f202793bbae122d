/**
 * Lethe's side of the erasure benchmark: the request filed through the erasure gateway, carried by the
 * erasure workflow on a worker in this process (its own task queue), followed by polling the request until
 * it is `completed`. Per-step durations come from the request's own step records.
 *
 * If the workflow cannot finish as shipped — an activity keeps timing out (each retry starts the step again
 * while the timed-out attempt is still running), or the request parks in needs-operator — the run is cut
 * short: the workflow is terminated, the worker drained (abandoned attempts run to their end), and the
 * remaining steps are run once more directly, in the workflow's order, outside Temporal (no activity
 * timeouts), to report what each of them costs at that size.
 */
import type { NativeConnection, WorkflowBundleOption } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Runtime } from '../../app/runtime.js';
import type { Services } from '../../app/services.js';
import type { ErasureRequest } from '../../src/governance/erasure/erasure-request.js';
import { createAllActivities } from '../../app/worker/activities.js';
import { erasureWorkflowId } from '../../src/temporal/erasure-gateway.js';
import { createLetheWorker } from '../../app/worker/worker.js';

const POLL_MS = 200;
const DESCRIBE_EVERY_MS = 5000;
/** What the workflow does between expunge attempts (workflows/erasure.workflow.ts). */
const EXPUNGE_WAIT_MS = 10_000;
const EXPUNGE_ATTEMPTS = 12;

export interface TimelineRow {
  step: string;
  /** Seconds from filing. */
  startS: number | null;
  ms: number;
  detail: string;
}

export interface ActivityStats {
  name: string;
  scheduled: number;
  /** Highest attempt number seen for one scheduling. */
  maxAttempt: number;
  timedOut: number;
  failed: number;
}

export interface DirectRun {
  fromActivity: string;
  rows: { step: string; ms: number; detail: string }[];
  totalMs: number;
  /** Filing → start of the step that could not finish, as the workflow ran it. */
  beforeMs: number;
  error?: string;
}

export interface LetheRun {
  outcome: 'completed' | 'aborted';
  reason: string;
  requestId: string;
  workflowId: string;
  /** Filing → `completed` seen (or → the abort). */
  totalMs: number;
  timeline: TimelineRow[];
  activities: ActivityStats[];
  timers: number;
  request: ErasureRequest | null;
  direct?: DirectRun;
}

export interface LetheOptions {
  taskQueue: string;
  connection: NativeConnection;
  workflowBundle: WorkflowBundleOption;
  /** Abort once an activity reaches this attempt (it has timed out or failed attempt − 1 times). */
  maxAttempt: number;
  /** Abort after this long. */
  capMs: number;
  progress: (message: string) => void;
}

const ACTIVITY_STEP: Record<string, string> = {
  locateTargets: 'locate',
  computeClosure: 'closure',
  authoriseAndCheckHolds: 'authorise',
  markDeletedAndTombstone: 'tombstone',
  purgeRecords: 'purge',
  expungeIndex: 'expunge',
  compactStores: 'compact',
  verifyErasure: 'verify',
  issueCertificate: 'certify',
  setErasureState: 'finish',
};
const SEQUENCE = Object.keys(ACTIVITY_STEP);
/** startToCloseTimeout of each activity's retry profile in the workflow (RetryProfiles.storeWrite / longPurge). */
export const ACTIVITY_TIMEOUT_MS: Record<string, number> = {
  locate: 120_000,
  closure: 30 * 60_000,
  authorise: 120_000,
  tombstone: 30 * 60_000,
  purge: 30 * 60_000,
  expunge: 120_000,
  compact: 30 * 60_000,
  verify: 30 * 60_000,
  certify: 120_000,
  finish: 120_000,
};

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const long = (v: unknown): number => Number(String(v ?? 0));

export async function runLethe(
  runtime: Runtime,
  services: Services,
  tenant: string,
  subject: string,
  options: LetheOptions,
): Promise<LetheRun> {
  const worker = await createLetheWorker(runtime, {
    taskQueue: options.taskQueue,
    services,
    connection: options.connection,
    workflowBundle: options.workflowBundle,
  });
  const running = worker.run();
  let drained = false;
  const drain = async () => {
    if (drained) return;
    drained = true;
    worker.shutdown();
    await running;
  };
  try {
    const principal = { id: 'dpo-bench', tenant, roles: ['dpo' as const] };
    const t0 = Date.now();
    const { request: filed } = await services.workflows.erasure.file(principal, {
      selector: { subjectId: subject },
      legalGround: 'art17-1a',
    });
    const workflowId = erasureWorkflowId(tenant, filed._id);
    const handle = services.temporalClient.workflow.getHandle(workflowId);
    let lastDescribe = 0;
    let lastLine = '';
    let abort: { reason: string; activity: string | null; kind: 'state' | 'attempts' | 'cap' } | null = null;
    let request: ErasureRequest | null = null;
    let tEnd = 0;
    for (;;) {
      request = await services.erasureRequests.get(tenant, filed._id);
      if (request?.state === 'completed') {
        tEnd = Date.now();
        break;
      }
      const elapsed = Date.now() - t0;
      if (
        request &&
        (request.state === 'needs-operator' || request.state === 'rejected' || request.state === 'partial')
      ) {
        tEnd = Date.now();
        const step = /step (\w+)/.exec(request.operatorNote ?? '')?.[1] ?? null;
        const activity = SEQUENCE.find((a) => ACTIVITY_STEP[a] === step) ?? null;
        abort = {
          reason: `${request.state}${request.operatorNote ? ` (${request.operatorNote})` : ''}`,
          activity,
          kind: 'state',
        };
        break;
      }
      if (Date.now() - lastDescribe >= DESCRIBE_EVERY_MS) {
        lastDescribe = Date.now();
        const description = await handle.describe();
        const pending = description.raw.pendingActivities ?? [];
        const current = pending[0];
        const name = current?.activityType?.name ?? '-';
        const attempt = current?.attempt ?? 0;
        const failure = current?.lastFailure?.message ?? '';
        const line =
          `  lethe ${secs(elapsed)}: ${request?.state ?? '?'}, activity ${name}` +
          (attempt > 1 ? ` attempt ${attempt} (last failure: ${failure || 'timeout'})` : '') +
          (request && request.progress.total > 0
            ? `, purged ${request.progress.purged}/${request.progress.total}`
            : '');
        if (line.replace(/^ {2}lethe [\d.]+ s: /, '') !== lastLine) options.progress(line);
        lastLine = line.replace(/^ {2}lethe [\d.]+ s: /, '');
        if (current && attempt >= options.maxAttempt) {
          tEnd = Date.now();
          abort = {
            reason: `${name} reached attempt ${attempt} (last failure: ${failure || 'timeout'})`,
            activity: name,
            kind: 'attempts',
          };
          break;
        }
        if (elapsed > options.capMs) {
          tEnd = Date.now();
          abort = {
            reason: `still running after the bench's cap of ${secs(options.capMs)}`,
            activity: current ? name : null,
            kind: 'cap',
          };
          break;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    options.progress(`  lethe: ${abort ? `aborted — ${abort.reason}` : 'completed'} after ${secs(tEnd - t0)}`);

    if (abort) {
      await handle.terminate(`bench: ${abort.reason}`).catch(() => undefined);
      options.progress('  lethe: workflow terminated; draining the worker (abandoned attempts run to their end)');
      const drainStart = Date.now();
      await drain();
      options.progress(`  lethe: worker drained in ${secs(Date.now() - drainStart)}`);
    }
    const history = await activityStats(handle);
    const finalRequest = (await services.erasureRequests.get(tenant, filed._id)) ?? request;
    const run: LetheRun = {
      outcome: abort ? 'aborted' : 'completed',
      reason: abort?.reason ?? 'completed',
      requestId: filed._id,
      workflowId,
      totalMs: tEnd - t0,
      timeline: timeline(request, t0, tEnd, !abort),
      activities: history.activities,
      timers: history.timers,
      request: finalRequest,
    };
    if (abort) {
      let from = abort.activity ?? 'locateTargets';
      // Cut short by the cap, the running attempt finished while the worker drained: go on from the next step.
      const record = finalRequest?.steps.find((st) => st.step === ACTIVITY_STEP[from]);
      if (abort.kind === 'cap' && record?.state === 'done' && record.finishedAt)
        from = SEQUENCE[SEQUENCE.indexOf(from) + 1] ?? from;
      const before = beforeMs(finalRequest, from, t0, tEnd);
      run.direct = await runDirect(runtime, services, { tenant, requestId: filed._id }, from, before, options.progress);
    }
    return run;
  } finally {
    await drain();
  }
}

/** Activity attempts, timeouts and failures from the workflow history (retries only show as the attempt number). */
async function activityStats(handle: {
  fetchHistory(): Promise<{ events?: unknown[] | null }>;
}): Promise<{ activities: ActivityStats[]; timers: number }> {
  const history = await handle.fetchHistory();
  const byScheduled = new Map<number, string>();
  const stats = new Map<string, ActivityStats>();
  let timers = 0;
  const of = (name: string) => {
    let s = stats.get(name);
    if (!s) stats.set(name, (s = { name, scheduled: 0, maxAttempt: 0, timedOut: 0, failed: 0 }));
    return s;
  };
  for (const raw of history.events ?? []) {
    const event = raw as Record<string, Record<string, unknown> | null | undefined> & { eventId?: unknown };
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const name = (scheduled.activityType as { name?: string } | undefined)?.name ?? '?';
      byScheduled.set(long(event.eventId), name);
      of(name).scheduled++;
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const s = of(byScheduled.get(long(started.scheduledEventId)) ?? '?');
      s.maxAttempt = Math.max(s.maxAttempt, Number(started.attempt ?? 1));
    }
    const timedOut = event.activityTaskTimedOutEventAttributes;
    if (timedOut) of(byScheduled.get(long(timedOut.scheduledEventId)) ?? '?').timedOut++;
    const failed = event.activityTaskFailedEventAttributes;
    if (failed) of(byScheduled.get(long(failed.scheduledEventId)) ?? '?').failed++;
    if (event.timerStartedEventAttributes) timers++;
  }
  return { activities: [...stats.values()], timers };
}

/** Recorded steps in order, with the time nothing records (compact, certify) read from the gaps around them. */
function timeline(request: ErasureRequest | null, t0: number, tEnd: number, completed: boolean): TimelineRow[] {
  const rows: TimelineRow[] = [];
  const steps = [...(request?.steps ?? [])].sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
  const first = steps[0];
  rows.push({
    step: 'filing → locate starts',
    startS: 0,
    ms: (first ? first.startedAt.getTime() : tEnd) - t0,
    detail: 'file() + workflow start + first task',
  });
  let handoffs = 0;
  let handoffCount = 0;
  for (const [i, s] of steps.entries()) {
    const prev = steps[i - 1];
    if (prev?.finishedAt) {
      const gap = s.startedAt.getTime() - prev.finishedAt.getTime();
      if (prev.step === 'expunge' && s.step === 'verify') {
        rows.push({
          step: 'compact (force; unrecorded, expunge end → verify start)',
          startS: (prev.finishedAt.getTime() - t0) / 1000,
          ms: gap,
          detail: '5 collections',
        });
      } else {
        handoffs += gap;
        handoffCount++;
      }
    }
    const end = s.finishedAt ? s.finishedAt.getTime() : tEnd;
    rows.push({
      step: s.finishedAt ? s.step : `${s.step} (unfinished)`,
      startS: (s.startedAt.getTime() - t0) / 1000,
      ms: end - s.startedAt.getTime(),
      detail: Object.entries(s.counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    });
  }
  const last = steps[steps.length - 1];
  if (completed && last?.finishedAt) {
    rows.push({
      step: 'certify + finish (unrecorded, verify end → completed seen)',
      startS: (last.finishedAt.getTime() - t0) / 1000,
      ms: tEnd - last.finishedAt.getTime(),
      detail: `sign, chain, anchor; ±${POLL_MS} ms polling`,
    });
  }
  rows.push({
    step: `hand-offs between the other steps (${handoffCount})`,
    startS: null,
    ms: handoffs,
    detail: 'activity completion → next activity starts',
  });
  return rows;
}

function beforeMs(request: ErasureRequest | null, activity: string, t0: number, tEnd: number): number {
  const step = ACTIVITY_STEP[activity];
  const record = request?.steps.find((s) => s.step === step);
  if (record) return record.startedAt.getTime() - t0;
  const finished = (request?.steps ?? []).map((s) => s.finishedAt?.getTime() ?? 0);
  return finished.length > 0 ? Math.max(...finished) - t0 : tEnd - t0;
}

/** The workflow's sequence from `from` on, each activity called once, directly, with no timeout. */
async function runDirect(
  runtime: Runtime,
  services: Services,
  ref: { tenant: string; requestId: string },
  from: string,
  before: number,
  progress: (message: string) => void,
): Promise<DirectRun> {
  const acts = createAllActivities(runtime, services);
  const rows: DirectRun['rows'] = [];
  const started = performance.now();
  const call = async <R>(fn: () => Promise<R>): Promise<R> => new MockActivityEnvironment().run(fn);
  const timedStep = async <R>(step: string, fn: () => Promise<R>, detail: (r: R) => string): Promise<R> => {
    const start = performance.now();
    const value = await fn();
    const ms = performance.now() - start;
    rows.push({ step, ms, detail: detail(value) });
    progress(`  direct ${step}: ${secs(ms)}`);
    return value;
  };
  const counts = (r: object) =>
    Object.entries(r)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(', ');
  const steps: Record<string, () => Promise<unknown>> = {
    locateTargets: () => timedStep('locate', () => call(() => acts.locateTargets(ref)), counts),
    computeClosure: () => timedStep('closure', () => call(() => acts.computeClosure(ref)), counts),
    authoriseAndCheckHolds: () =>
      timedStep(
        'authorise',
        () => call(() => acts.authoriseAndCheckHolds(ref)),
        (r) => counts({ allowed: r.allowed, toErase: r.toErase, held: r.held }),
      ),
    markDeletedAndTombstone: () => timedStep('tombstone', () => call(() => acts.markDeletedAndTombstone(ref)), counts),
    purgeRecords: () => timedStep('purge', () => call(() => acts.purgeRecords({ ...ref, round: 1 })), counts),
    expungeIndex: () =>
      timedStep(
        'expunge (10 s waits, as the workflow)',
        async () => {
          for (let attempt = 1; attempt <= EXPUNGE_ATTEMPTS; attempt++) {
            const stats = await call(() => acts.expungeIndex(ref));
            if (stats.deletedDocs === 0) return { attempts: attempt, deletedDocs: 0 };
            if (attempt === EXPUNGE_ATTEMPTS) return { attempts: attempt, deletedDocs: stats.deletedDocs };
            await new Promise((resolve) => setTimeout(resolve, EXPUNGE_WAIT_MS));
          }
          return { attempts: EXPUNGE_ATTEMPTS, deletedDocs: -1 };
        },
        counts,
      ),
    compactStores: () => timedStep('compact', () => call(() => acts.compactStores(ref)), counts),
    verifyErasure: () => timedStep('verify', () => call(() => acts.verifyErasure(ref)), counts),
    issueCertificate: () =>
      timedStep('certify', () => call(() => acts.issueCertificate({ ...ref, status: 'complete' })), counts),
    setErasureState: () =>
      timedStep(
        'finish',
        () => call(() => acts.setErasureState({ ...ref, state: 'completed' })),
        () => 'completed',
      ),
  };
  let error: string | undefined;
  try {
    for (const name of SEQUENCE.slice(Math.max(0, SEQUENCE.indexOf(from)))) await steps[name]!();
  } catch (e) {
    error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    progress(`  direct: failed — ${error}`);
  }
  return {
    fromActivity: from,
    rows,
    totalMs: performance.now() - started,
    beforeMs: before,
    ...(error ? { error } : {}),
  };
}
