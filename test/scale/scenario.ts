/**
 * The fleet the scale test drives and what it measures: API and worker processes on one task queue, writes in
 * batches through the APIs in turn, erasure filings that fail over to the other API as a client behind a balancer
 * would (the same request key, so a filing is never made twice), retrieval loops against both APIs, and the wait
 * for requests to complete, during which it does what an operator and a DPO would do for a parked request.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { Services } from '../../app/services.js';
import type { ErasureRequest } from '../../src/governance/erasure/erasure-request.js';
import { openFindings } from '../../src/governance/erasure/copy-findings.js';
import { erasureWorkflowId } from '../../src/shared/workflow-ids.js';
import type { Role } from '../../src/governance/auth/principal.js';
import { mintToken } from '../../src/governance/auth/tokens.js';
import type { PageKey } from '../../src/substrate/mongo/keyset-page.js';
import { startApiProcess, type ApiProcess } from '../support/api-process.js';
import { startWorkerProcess, tail, type WorkerExit, type WorkerProcess } from '../support/worker-process.js';
import { plannedBatches, subjectId, subjectName, type PlannedBatch, type ScalePlan } from './scale-data.js';
import { Traffic, inFlight, type Window } from './traffic.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One tenant of the test's own: its subjects' record ids as admitted, and which subjects it erases. */
export interface TenantData {
  tenant: string;
  /** The agent that writes every record, and reads them back (its own scope). */
  writer: string;
  subjects: number;
  memoryIds: Map<number, string[]>;
  eventIds: Map<number, string[]>;
  /** Memories by the status admission gave them. */
  statuses: Map<string, number>;
  erased: number[];
}

export interface FiledRequest {
  tenant: string;
  subject: number;
  id: string;
  /** Answered 200 rather than 202: a filing of the same request key that found the request already filed. */
  refiled: number;
  state: string;
  receivedAt?: Date;
  /** The server's time of the completing write. */
  completedAt?: Date;
  /** When this test first saw it completed (later than `completedAt`). */
  observedAt?: number;
  /** Time in each step (all its runs), from the request's own step records. */
  stepMs?: Record<string, number>;
  queuedMs?: number;
  compactMs?: number;
  operatorRetries: number;
  lastRetryAt: number;
  /** When a poll first saw it parked for an operator, since it last was not. */
  parkedSince?: number;
  dpoDecisions: number;
}

export interface RetrievalRecord {
  tenant: string;
  subject: number;
  sentAt: number;
  itemIds: string[];
}

export interface PhaseReport {
  name: string;
  workers: number;
  tenants: number;
  subjects: number;
  memories: number;
  admitFrom: number;
  admitTo: number;
  batchMs: number[];
  erasures: number;
  /** When the first filing of the phase was sent. */
  eraseFrom: number;
  /** The last completion's server time. */
  eraseTo: number;
  /** Filed → completed, per request, server times. */
  requestMs: number[];
  /** Per step, the time each request spent in it. */
  stepMs: Record<string, number[]>;
  /** Filed → its first step started: how long it waited for a worker. */
  queuedMs: number[];
  /** The last expunge's end → the verification's start: the compaction of the stores (not a step of its own). */
  compactMs: number[];
  loads: number[];
  startedAt: Date;
  endedAt: Date;
}

export interface ProcessEvent {
  at: number;
  what: string;
}

export class Scenario {
  readonly traffic: Traffic;
  readonly ports: number[];
  /** The API process serving each port now. */
  readonly apis: ApiProcess[] = [];
  /** Every API process started, for the cleanup. */
  readonly allApis: ApiProcess[] = [];
  readonly workers: WorkerProcess[] = [];
  readonly retrievals: RetrievalRecord[] = [];
  readonly filed: FiledRequest[] = [];
  readonly windows: Window[] = [];
  readonly events: ProcessEvent[] = [];
  /** Operator notes of parked requests, by note. */
  readonly parkNotes = new Map<string, number>();
  filingRetries = 0;
  /** Copies the verification put to the DPO, by whose record each was: another subject's, or the erased one's own. */
  readonly findingOwners = { otherSubject: 0, sameSubject: 0, unknown: 0 };
  /** Every admitted record's subject, by tenant and id: what the DPO checks a finding against. */
  private readonly subjectOf = new Map<string, number>();
  private readonly decidedFindings = new Set<string>();
  private readonly tokens = new Map<string, Promise<string>>();
  /** Pids this scenario stopped itself (SIGTERM, SIGKILL): their exits are expected. */
  private readonly stopping = new Set<number>();
  /** Processes that exited without being asked to. */
  readonly unexpectedExits: string[] = [];

  constructor(
    private readonly plan: ScalePlan,
    private readonly options: { taskQueue: string; tokenSecret: string; services: Services; ports: number[] },
  ) {
    this.ports = options.ports;
    this.traffic = new Traffic((api) => `http://127.0.0.1:${this.ports[api]}`);
  }

  get liveWorkers(): WorkerProcess[] {
    return this.workers.filter((w) => !w.exited);
  }

  token(tenant: string, roles: Role[], principal: string): Promise<string> {
    const key = `${tenant}|${roles.join(',')}|${principal}`;
    let token = this.tokens.get(key);
    if (!token) {
      // Long enough for the whole run: a token that expired mid-run would read as a refusal of the API.
      token = mintToken(this.options.tokenSecret, { id: principal, tenant, roles }, 6 * 60 * 60);
      this.tokens.set(key, token);
    }
    return token;
  }

  note(what: string): void {
    this.events.push({ at: Date.now(), what });
  }

  async startApi(slot: number): Promise<ApiProcess> {
    const api = startApiProcess({
      port: this.ports[slot]!,
      taskQueue: this.options.taskQueue,
      tokenSecret: this.options.tokenSecret,
    });
    this.apis[slot] = api;
    this.allApis.push(api);
    this.watchExit(`API ${slot}`, api);
    await api.ready();
    this.note(`API ${slot} (pid ${api.pid}) ready on port ${api.port}`);
    return api;
  }

  async startWorker(): Promise<WorkerProcess> {
    const worker = startWorkerProcess({ taskQueue: this.options.taskQueue });
    this.workers.push(worker);
    this.watchExit('worker', worker);
    await worker.ready(this.options.services.temporalClient, 180_000);
    this.note(`worker pid ${worker.pid} polling (${this.liveWorkers.length} live)`);
    return worker;
  }

  /**
   * Notes a process that exits without this scenario stopping it (a crash, an OOM kill), with the tail of its log:
   * a fleet that loses its only worker would otherwise wait out the settle deadline in silence.
   */
  private watchExit(what: string, process: { pid: number; logFile: string; waitExit(): Promise<WorkerExit> }): void {
    void process.waitExit().then((exit) => {
      if (this.stopping.has(process.pid)) return;
      this.unexpectedExits.push(`${what} pid ${process.pid} exited unasked ${JSON.stringify(exit)}`);
      this.note(`${what} pid ${process.pid} exited unasked ${JSON.stringify(exit)}; log:\n${tail(process.logFile)}`);
    });
  }

  /** SIGTERM, wait for the exit, start again on the same port: the window is from the signal to ready again. */
  async restartApi(slot: number): Promise<{ window: Window; exit: WorkerExit }> {
    const from = Date.now();
    const old = this.apis[slot]!;
    this.note(`API ${slot} (pid ${old.pid}) sent SIGTERM`);
    this.stopping.add(old.pid);
    old.kill('SIGTERM');
    const exit = await old.waitExit();
    this.note(`API ${slot} exited ${JSON.stringify(exit)}`);
    await this.startApi(slot);
    const window = { api: slot, from, to: Date.now() };
    this.windows.push(window);
    return { window, exit };
  }

  /** SIGKILL, as an OOM kill or a lost node would: no grace, its activities are retried elsewhere. */
  async killWorker(victim: WorkerProcess): Promise<WorkerExit> {
    this.note(`worker pid ${victim.pid} sent SIGKILL`);
    this.stopping.add(victim.pid);
    victim.kill('SIGKILL');
    const exit = await victim.waitExit();
    this.note(`worker pid ${victim.pid} exited ${JSON.stringify(exit)}`);
    return exit;
  }

  /** Every batch of the tenants, the tenants interleaved, in turn through the two APIs; any refusal fails the run. */
  async admit(tenants: TenantData[], report: PhaseReport): Promise<void> {
    const perTenant = tenants.map((t) =>
      plannedBatches(t.subjects, this.plan.memoriesPerSubject, this.plan.batch).map((b) => ({ t, b })),
    );
    report.admitFrom = Date.now();
    // A tenant's first write creates its usage counters with an upsert, and on the local FerretDB two concurrent
    // upserts of one new counter can fail with a duplicate key (a 500): each tenant's first batch goes alone.
    const first = perTenant.map((batches) => batches.slice(0, 1));
    const rest = perTenant.map((batches) => batches.slice(1));
    await inFlight(interleave(first), 1, (item, index) => this.admitBatch(item, index, report));
    await inFlight(interleave(rest), this.plan.batchesInFlight, (item, index) =>
      this.admitBatch(item, index + 1, report),
    );
    report.admitTo = Date.now();
  }

  private async admitBatch(
    { t, b }: { t: TenantData; b: PlannedBatch },
    index: number,
    report: PhaseReport,
  ): Promise<void> {
    const api = index % 2;
    const sent = Date.now();
    const answer = await this.traffic.send<{
      events: { id: string }[];
      memories: { id: string; status: string }[];
    }>('admit', api, {
      method: 'POST',
      path: `/v1/tenants/${t.tenant}/batches`,
      token: await this.token(t.tenant, ['agent'], t.writer),
      body: b.body,
      timeoutMs: 300_000,
    });
    if (!answer.ok) throw new Error(`a write batch got ${answer.status ?? 'no answer'}: ${answer.text.slice(0, 300)}`);
    report.batchMs.push(Date.now() - sent);
    const per = this.plan.memoriesPerSubject;
    b.subjects.forEach((s, i) => {
      for (const record of [
        ...answer.body.memories.slice(i * per, (i + 1) * per),
        ...answer.body.events.slice(i * per, (i + 1) * per),
      ])
        this.subjectOf.set(`${t.tenant}|${record.id}`, s);
      t.memoryIds.set(
        s,
        answer.body.memories.slice(i * per, (i + 1) * per).map((m) => m.id),
      );
      t.eventIds.set(
        s,
        answer.body.events.slice(i * per, (i + 1) * per).map((e) => e.id),
      );
    });
    for (const m of answer.body.memories) t.statuses.set(m.status, (t.statuses.get(m.status) ?? 0) + 1);
    report.memories += answer.body.memories.length;
  }

  /**
   * Files one request per erased subject, the tenants interleaved, alternating APIs. A filing without an answer, or
   * answered 5xx or 429, is sent again with the same request key to the other API.
   */
  async file(tenants: TenantData[], report: PhaseReport, onFiled?: (count: number) => void): Promise<FiledRequest[]> {
    const queue = interleave(tenants.map((t) => t.erased.map((subject) => ({ t, subject }))));
    const mine: FiledRequest[] = [];
    report.eraseFrom = Date.now();
    await inFlight(queue, this.plan.filingsInFlight, async ({ t, subject }, index) => {
      let api = index % 2;
      for (let attempt = 1; ; attempt++) {
        const answer = await this.traffic.send<{ id: string; state: string }>('file', api, {
          method: 'POST',
          path: `/v1/tenants/${t.tenant}/erasure-requests`,
          token: await this.token(t.tenant, ['dpo'], 'dpo-scale'),
          body: {
            selector: { subjectId: subjectId(subject) },
            legalGround: 'art17-1a',
            requestKey: subjectId(subject),
          },
          timeoutMs: 60_000,
        });
        if (answer.ok) {
          const request: FiledRequest = {
            tenant: t.tenant,
            subject,
            id: answer.body.id,
            refiled: answer.status === 200 ? 1 : 0,
            state: answer.body.state,
            operatorRetries: 0,
            lastRetryAt: 0,
            dpoDecisions: 0,
          };
          mine.push(request);
          this.filed.push(request);
          onFiled?.(mine.length);
          return;
        }
        const retryable = answer.status === null || answer.status >= 500 || answer.status === 429;
        if (!retryable || attempt >= 10)
          throw new Error(`a filing got ${answer.status ?? 'no answer'}: ${answer.text.slice(0, 300)}`);
        this.filingRetries++;
        api = 1 - api;
        await sleep(500);
      }
    });
    return mine;
  }

  /**
   * Waits until every request is completed. A request parked for an operator is retried through the API as the
   * runbook says once it has waited 30 s; copies found outside a closure are put to the DPO's decision (extend).
   * Both are counted, and the test reports them.
   */
  async settle(requests: FiledRequest[], report: PhaseReport, onPoll?: (completed: number) => Promise<void>) {
    const deadline = Date.now() + this.plan.settleMinutes * 60_000;
    const tenants = [...new Set(requests.map((r) => r.tenant))];
    /** Where each unfinished request stands, by id: its state and last step, ids and counts only. */
    const standing = new Map<string, string>();
    let reportedAt = Date.now();
    for (;;) {
      for (const tenant of tenants) {
        const stored = await this.requestsOf(tenant);
        for (const r of requests.filter((x) => x.tenant === tenant)) {
          const s = stored.get(r.id);
          if (!s) continue;
          r.state = s.state;
          r.receivedAt = s.receivedAt;
          if (s.state === 'completed' && r.observedAt === undefined) {
            r.observedAt = Date.now();
            r.completedAt = s.updatedAt;
            r.stepMs = {};
            for (const step of s.steps)
              r.stepMs[step.step] =
                (r.stepMs[step.step] ?? 0) + ((step.finishedAt ?? s.updatedAt).getTime() - step.startedAt.getTime());
            const first = s.steps[0];
            const expunged = s.steps.filter((x) => x.step === 'expunge').pop();
            const verified = s.steps.filter((x) => x.step === 'verify').pop();
            if (first) r.queuedMs = first.startedAt.getTime() - s.receivedAt.getTime();
            if (expunged?.finishedAt && verified)
              r.compactMs = verified.startedAt.getTime() - expunged.finishedAt.getTime();
          }
          const last = s.steps.at(-1);
          standing.set(
            r.id,
            `${s.state}${last ? `, ${last.step} ${last.finishedAt ? 'finished' : 'started'} ` + `${Math.round((Date.now() - last.startedAt.getTime()) / 1000)} s ago` : ''}` +
              `, ${s.steps.length} step records, ${r.operatorRetries} operator retries, ${r.dpoDecisions} DPO decisions`,
          );
          // Retried once it has waited 30 s parked (a retry is the runbook's answer to a park that outlasts a blip).
          if (s.state !== 'needs-operator') r.parkedSince = undefined;
          else if (r.parkedSince === undefined) r.parkedSince = Date.now();
          else if (Date.now() - Math.max(r.parkedSince, r.lastRetryAt) > 30_000) await this.operatorRetry(r, s);
          if (s.state === 'needs-dpo') await this.dpoDecides(r, s);
          if (s.state === 'rejected') throw new Error(`erasure request ${r.id} was rejected: ${s.operatorNote ?? ''}`);
        }
      }
      const completed = requests.filter((r) => r.observedAt !== undefined).length;
      await onPoll?.(completed);
      if (completed === requests.length) break;
      const unfinished = () =>
        requests
          .filter((r) => r.observedAt === undefined)
          .map((r) => `  ${r.tenant} ${r.id}: ${standing.get(r.id) ?? 'not found in its tenant'}`);
      // A CI log shows only what a test printed: a run that does not settle says where it stands every minute.
      if (Date.now() - reportedAt > 60_000) {
        reportedAt = Date.now();
        // The stored request cannot say that its run has ended: a run that failed or was terminated would leave it
        // `running` until the deadline. Ended runs of unfinished requests fail the phase at once, with their status.
        const ended = await this.endedRuns(requests.filter((r) => r.observedAt === undefined));
        if (ended.length > 0)
          throw new Error(
            `the runs of ${ended.length} unfinished requests have ended: ${ended.join('; ')}\n${unfinished().join('\n')}`,
          );
        console.log(
          [
            `settling: ${completed}/${requests.length} completed, ${this.liveWorkers.length} workers live` +
              (this.unexpectedExits.length ? ` (${this.unexpectedExits.join('; ')})` : '') +
              '; unfinished:',
            ...unfinished(),
          ].join('\n'),
        );
      }
      // No worker left: nothing will move (the kill in the three-worker phase leaves two live while a replacement
      // starts).
      if (this.liveWorkers.length === 0)
        throw new Error(
          `no worker process is left (${this.unexpectedExits.join('; ') || 'all stopped by the test'}); ` +
            `${completed}/${requests.length} requests completed:\n${unfinished().join('\n')}`,
        );
      if (Date.now() > deadline) {
        const states = new Map<string, number>();
        for (const r of requests) states.set(r.state, (states.get(r.state) ?? 0) + 1);
        throw new Error(
          `after ${this.plan.settleMinutes} min, ${completed}/${requests.length} requests completed: ` +
            `${JSON.stringify(Object.fromEntries(states))}\n${unfinished().join('\n')}`,
        );
      }
      await sleep(2000);
    }
    report.eraseTo = Math.max(...requests.map((r) => r.completedAt!.getTime()));
    report.erasures = requests.length;
    report.requestMs = requests.map((r) => r.completedAt!.getTime() - r.receivedAt!.getTime());
    for (const r of requests) {
      for (const [step, ms] of Object.entries(r.stepMs ?? {})) (report.stepMs[step] ??= []).push(ms);
      if (r.queuedMs !== undefined) report.queuedMs.push(r.queuedMs);
      if (r.compactMs !== undefined) report.compactMs.push(r.compactMs);
    }
  }

  /** Requests whose erasure run is no longer running, each as `<tenant> <id>: <status>` (ids only). */
  private async endedRuns(requests: readonly FiledRequest[]): Promise<string[]> {
    const ended: string[] = [];
    for (const r of requests) {
      const run = await this.options.services.temporalClient.workflow
        .getHandle(erasureWorkflowId(r.tenant, r.id))
        .describe()
        .catch((error: unknown) => ({ status: { name: `not found (${(error as Error).name})` } }));
      if (run.status.name === 'RUNNING') continue;
      // A run that completed since the stored requests were read is no fault: its request is read again.
      if (run.status.name === 'COMPLETED' && (await this.requestsOf(r.tenant)).get(r.id)?.state === 'completed')
        continue;
      ended.push(`${r.tenant} ${r.id}: ${run.status.name}`);
    }
    return ended;
  }

  private async requestsOf(tenant: string): Promise<Map<string, ErasureRequest>> {
    const found = new Map<string, ErasureRequest>();
    let after: PageKey | null = null;
    do {
      const page = await this.options.services.erasureRequests.page(tenant, 500, after);
      for (const r of page.items) found.set(r._id, r);
      after = page.next;
    } while (after);
    return found;
  }

  private async operatorRetry(r: FiledRequest, stored: ErasureRequest): Promise<void> {
    if (r.operatorRetries >= 6) throw new Error(`erasure request ${r.id} parked again after 6 retries`);
    const note = stored.operatorNote ?? '(no note)';
    this.parkNotes.set(note, (this.parkNotes.get(note) ?? 0) + 1);
    r.lastRetryAt = Date.now();
    const answer = await this.traffic.send('retry', r.operatorRetries % 2, {
      method: 'POST',
      path: `/v1/tenants/${r.tenant}/erasure-requests/${r.id}/retry`,
      token: await this.token(r.tenant, ['dpo'], 'dpo-scale'),
    });
    // Counted when the run took it: a 409 says it had already moved on (read while parked, retried by then), and a
    // retry that got no answer is sent again 30 s later.
    if (answer.ok) r.operatorRetries++;
  }

  /**
   * What a DPO does with copies found outside a closure, knowing whose records they are: each subject's sentences
   * differ only in the name, so a vector probe can find another customer's record of the same fact. Records of other
   * subjects are certified as not the subject's (erasing them would erase someone else's data); anything of the
   * subject's own, or of no known subject, is added to the erasure.
   */
  private async dpoDecides(r: FiledRequest, stored: ErasureRequest): Promise<void> {
    // The stored request can still read needs-dpo for a poll after a decision was sent: each finding is decided once.
    const open = openFindings(stored.findings).filter((f) => !this.decidedFindings.has(`${r.id}|${f.id}`));
    if (open.length === 0) return;
    for (const f of open) this.decidedFindings.add(`${r.id}|${f.id}`);
    if (r.dpoDecisions >= 6) throw new Error(`erasure request ${r.id} put copies to the DPO again after 6 decisions`);
    r.dpoDecisions++;
    const owners = open.map((f) => this.subjectOf.get(`${r.tenant}|${f.id}`));
    for (const owner of owners) {
      if (owner === undefined) this.findingOwners.unknown++;
      else if (owner === r.subject) this.findingOwners.sameSubject++;
      else this.findingOwners.otherSubject++;
    }
    const othersOnly = owners.every((o) => o !== undefined && o !== r.subject);
    const answer = await this.traffic.send('findings', 0, {
      method: 'POST',
      path: `/v1/tenants/${r.tenant}/erasure-requests/${r.id}/findings`,
      token: await this.token(r.tenant, ['dpo'], 'dpo-scale'),
      body: othersOnly
        ? { decision: 'certify', reason: "scale test: the copies found are other customers' records of the same fact" }
        : { decision: 'extend', reason: 'scale test: erase the copies too' },
    });
    if (!answer.ok)
      throw new Error(`a findings decision got ${answer.status ?? 'no answer'}: ${answer.text.slice(0, 300)}`);
  }

  /**
   * Retrieval loops, `readersPerApi` per API: each asks as a tenant's writer how a subject wants to be contacted, an
   * erased subject half the time, and keeps the ids it was served.
   */
  startReaders(tenants: () => TenantData[]): { stop(): Promise<void> } {
    let stopped = false;
    const loop = async (api: number) => {
      while (!stopped) {
        const pool = tenants();
        const t = pool[Math.floor(Math.random() * pool.length)]!;
        const subject =
          Math.random() < 0.5 && t.erased.length > 0
            ? t.erased[Math.floor(Math.random() * t.erased.length)]!
            : Math.floor(Math.random() * t.subjects);
        const sentAt = Date.now();
        const answer = await this.traffic.send<{ items: { id: string }[] }>('retrieve', api, {
          method: 'POST',
          path: `/v1/tenants/${t.tenant}/retrieve`,
          token: await this.token(t.tenant, ['agent'], t.writer),
          body: { query: `How does ${subjectName(subject)} want to be contacted?`, k: 5 },
          timeoutMs: 60_000,
        });
        this.retrievals.push({
          tenant: t.tenant,
          subject,
          sentAt,
          itemIds: answer.ok ? answer.body.items.map((i) => i.id) : [],
        });
        // About one call a second per loop: enough to meet every erasure's steps, not enough to be the load.
        await sleep(1000);
      }
    };
    const loops = [0, 1].flatMap((api) => Array.from({ length: this.plan.readersPerApi }, () => loop(api)));
    return {
      async stop() {
        stopped = true;
        await Promise.all(loops);
      },
    };
  }

  /** Samples the 1-minute load average into the phase's report every 5 s. */
  sampleLoad(report: PhaseReport): () => void {
    report.loads.push(os.loadavg()[0]!);
    const timer = setInterval(() => report.loads.push(os.loadavg()[0]!), 5000);
    return () => clearInterval(timer);
  }

  /** What each process logged at warn or above, by message and error type (the logs hold no content). */
  logSummaries(): string[] {
    const processes = [
      ...this.allApis.map((p) => ({ what: `API pid ${p.pid}`, file: p.logFile })),
      ...this.workers.map((p) => ({ what: `worker pid ${p.pid}`, file: p.logFile })),
    ];
    return processes.map(({ what, file }) => {
      const counts = new Map<string, number>();
      let text = '';
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        // no log written
      }
      for (const line of text.split('\n')) {
        let key: string | null = null;
        if (line.startsWith('{')) {
          try {
            const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { type?: string; code?: unknown } };
            const err = entry.err
              ? ` (${[entry.err.type, entry.err.code].filter((x) => x !== undefined).join(' ')})`
              : '';
            if ((entry.level ?? 0) >= 40) key = `${entry.msg ?? '?'}${err}`;
          } catch {
            key = 'a line that is not JSON';
          }
        } else {
          // The Temporal SDK's own lines: `<time> [LEVEL] message { fields }`.
          const sdk = /\[(WARN|ERROR)\]\s+([^{]*)/.exec(line);
          if (sdk) key = `Temporal ${sdk[1]}: ${sdk[2]!.trim()}`;
        }
        if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4);
      return `  ${what}: ${top.length === 0 ? 'nothing' : top.map(([k, n]) => `${n} × ${k}`).join('; ')}`;
    });
  }

  /** Kills every process this scenario started (also after a failure). */
  async killAll(): Promise<void> {
    for (const p of [...this.workers, ...this.allApis]) this.stopping.add(p.pid);
    for (const p of [...this.workers, ...this.allApis]) p.kill('SIGKILL');
    await Promise.all([...this.workers, ...this.allApis].map((p) => p.waitExit()));
  }
}

export function newPhase(name: string, workers: number, tenants: TenantData[]): PhaseReport {
  return {
    name,
    workers,
    tenants: tenants.length,
    subjects: tenants.reduce((n, t) => n + t.subjects, 0),
    memories: 0,
    admitFrom: 0,
    admitTo: 0,
    batchMs: [],
    erasures: 0,
    eraseFrom: 0,
    eraseTo: 0,
    requestMs: [],
    stepMs: {},
    queuedMs: [],
    compactMs: [],
    loads: [],
    startedAt: new Date(),
    endedAt: new Date(),
  };
}

/** Round-robin over the lists: the first of each, then the second of each, and so on. */
function interleave<T>(lists: T[][]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const l of lists) if (i < l.length) out.push(l[i]!);
  return out;
}
