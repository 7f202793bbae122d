/**
 * Temporal part of `bench/stack.bench.ts`: workflow and activity-step latency, sequential and concurrent, on the
 * stack's dev server (dispatch limits raised) and on a second dev server this module starts with the defaults.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { bundlerOptions } from '../../app/worker/bundling.js';
import { freePort, sleep, tail } from '../../stack/processes.js';
import type { StackBenchActivities } from './stack-bench.workflows.js';
import { median, percentile, timed } from './stack-report.js';

export const WORKFLOWS_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stack-bench.workflows.ts');

export interface TemporalPlan {
  /** Activities per workflow in the sequential measurement. */
  steps: number;
  /** Rounds; each server gets, per round and back to back: warm-up, sequential runs, one concurrent round. */
  passes: number;
  /** Measured sequential workflows per pass and server. */
  sequentialPerPass: number;
  /** Unmeasured sequential workflows before them (the first pass adds one, and a concurrent round). */
  warmupPerPass: number;
  /** One-activity workflows started at once in a concurrent round. */
  concurrency: number;
}

export interface TemporalFigures {
  label: string;
  address: string;
  /** Wall time of one sequential workflow, start to result, ms. */
  workflowMs: number[];
  /** Workflows per second of each concurrent round. */
  concurrentRates: number[];
  /** Ids of the workflows run, for clean-up. */
  workflowIds: string[];
}

export interface TemporalTarget {
  label: string;
  address: string;
  namespace: string;
}

const activities: StackBenchActivities = {
  async benchStep(value: number): Promise<number> {
    return value + 1;
  },
};

export function bundleBenchWorkflows(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, ...bundlerOptions, logger: new DefaultLogger('WARN') });
}

interface Session {
  figures: TemporalFigures;
  sequential(): Promise<number>;
  concurrentRound(): Promise<number>;
}

/** A client and a worker of this process on a task queue of its own on one server. */
async function open(target: TemporalTarget, bundle: WorkflowBundle, plan: TemporalPlan) {
  const nativeConnection = await NativeConnection.connect({ address: target.address });
  const connection = await Connection.connect({ address: target.address });
  const close = async () => {
    await nativeConnection.close();
    await connection.close();
  };
  try {
    const client = new Client({ connection, namespace: target.namespace });
    const taskQueue = `lethe-bench-stack-${randomUUID()}`;
    const figures: TemporalFigures = { ...target, workflowMs: [], concurrentRates: [], workflowIds: [] };
    const id = (kind: string) => {
      const workflowId = `${taskQueue}-${kind}-${figures.workflowIds.length}`;
      figures.workflowIds.push(workflowId);
      return workflowId;
    };
    const worker = await Worker.create({
      connection: nativeConnection,
      namespace: target.namespace,
      taskQueue,
      workflowBundle: bundle,
      activities,
    });
    const session: Session = {
      figures,
      async sequential() {
        const { ms, value } = await timed(() =>
          client.workflow.execute('benchSequentialSteps', { taskQueue, workflowId: id('seq'), args: [plan.steps] }),
        );
        if (value !== plan.steps) throw new Error(`benchSequentialSteps returned ${value}, expected ${plan.steps}`);
        return ms;
      },
      async concurrentRound() {
        const { ms, value } = await timed(() =>
          Promise.all(
            Array.from({ length: plan.concurrency }, () =>
              client.workflow.execute('benchSingleStep', { taskQueue, workflowId: id('one'), args: [] }),
            ),
          ),
        );
        if (value.some((v) => v !== 1)) throw new Error('benchSingleStep returned a wrong value');
        return (plan.concurrency / ms) * 1000;
      },
    };
    return { worker, session, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Measures both servers in alternating passes (order swapped each pass), so that the load of a shared machine
 * falls on both alike. Each server's block starts with an unmeasured workflow, which also spends what a default
 * server's dispatch token bucket refilled while the other server was measured: what follows is the steady state.
 */
export async function measureTemporal(
  targets: readonly [TemporalTarget, TemporalTarget],
  bundle: WorkflowBundle,
  plan: TemporalPlan,
  progress: (message: string) => void,
): Promise<[TemporalFigures, TemporalFigures]> {
  const a = await open(targets[0], bundle, plan);
  try {
    const b = await open(targets[1], bundle, plan);
    try {
      const sessions = [a.session, b.session] as const;
      await a.worker.runUntil(() =>
        b.worker.runUntil(async () => {
          for (let pass = 0; pass < plan.passes; pass++) {
            const order = pass % 2 === 0 ? sessions : ([sessions[1], sessions[0]] as const);
            for (const session of order) {
              const warmup = plan.warmupPerPass + (pass === 0 ? 1 : 0);
              for (let i = 0; i < warmup; i++) await session.sequential();
              for (let i = 0; i < plan.sequentialPerPass; i++)
                session.figures.workflowMs.push(await session.sequential());
              if (pass === 0) await session.concurrentRound();
              session.figures.concurrentRates.push(await session.concurrentRound());
            }
            progress(`temporal: pass ${pass + 1}/${plan.passes} done`);
          }
        }),
      );
      return [a.session.figures, b.session.figures];
    } finally {
      await b.close();
    }
  } finally {
    await a.close();
  }
}

/** Best-effort removal of the bench's workflow executions from a long-lived server. */
export async function deleteWorkflows(
  address: string,
  namespace: string,
  workflowIds: readonly string[],
): Promise<number> {
  const connection = await Connection.connect({ address });
  let deleted = 0;
  try {
    for (let i = 0; i < workflowIds.length; i += 20) {
      const results = await Promise.allSettled(
        workflowIds
          .slice(i, i + 20)
          .map((workflowId) =>
            connection.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId } }),
          ),
      );
      deleted += results.filter((r) => r.status === 'fulfilled').length;
    }
  } finally {
    await connection.close();
  }
  return deleted;
}

export function summarise(figures: TemporalFigures, steps: number) {
  const p50 = median(figures.workflowMs);
  return {
    workflowP50: p50,
    workflowP95: percentile(figures.workflowMs, 95),
    stepP50: p50 / steps,
    concurrentRate: median(figures.concurrentRates),
  };
}

async function serving(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    return (await connection.healthService.check({})).status === 1; // SERVING
  } finally {
    await connection.close();
  }
}

/** A second dev server with Temporal's default dynamic config, owned by this process (stopped by its pid). */
export interface DefaultDevServer {
  address: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startDefaultDevServer(binary: string, timeoutMs = 90_000): Promise<DefaultDevServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-bench-temporal-'));
  const logFile = path.join(dir, 'server.log');
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const out = fs.openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      binary,
      [
        'server',
        'start-dev',
        '--headless',
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--db-filename',
        path.join(dir, 'temporal.db'),
        '--log-level',
        'warn',
      ],
      { stdio: ['ignore', out, out] },
    );
  } finally {
    fs.closeSync(out);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${binary}`);
  let exited = false;
  child.once('exit', () => (exited = true));

  // Stopped by this pid only; also on Ctrl-C, so that no server outlives the bench.
  const onSignal = (signal: NodeJS.Signals) => {
    if (!exited) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const stop = async () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!exited) {
      process.kill(pid, 'SIGTERM');
      for (let waited = 0; !exited && waited < 15_000; waited += 100) await sleep(100);
      if (!exited) process.kill(pid, 'SIGKILL');
      for (let waited = 0; !exited && waited < 5_000; waited += 100) await sleep(100);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !exited) {
    if (await serving(address).catch(() => false)) return { address, pid, stop };
    await sleep(300);
  }
  const why = exited ? 'exited' : `did not answer within ${timeoutMs / 1000} s`;
  const log = tail(logFile);
  await stop();
  throw new Error(`second Temporal dev server ${why}:\n${log}`);
}
