/**
 * The deterministic verifier on a small pool of worker threads, under a CPU deadline: a view that runs past it has
 * its thread stopped and is reported as a deadline, so no evidence, however built, holds the event loop of the
 * process that audits (its activities keep heartbeating, other writes keep being admitted). Same id and version as
 * the in-process verifier: the verdicts are the same.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DETERMINISTIC_VERIFIER_ID, DETERMINISTIC_VERIFIER_VERSION } from './deterministic-verifier.js';
import type { Obligation } from './obligations.js';
import {
  VerifierDeadlineExceeded,
  type DerivationVerifier,
  type EvidencePassage,
  type ObligationVerdict,
} from './verifier.port.js';

/** What the pool sends a thread: one view to judge. */
export interface VerifyRequest {
  id: number;
  obligations: readonly Obligation[];
  evidence: readonly EvidencePassage[];
}

/** A thread's answer to one view, or its first message: that it has loaded and takes views. */
export type VerifyResponse =
  { id: number; verdicts: ObligationVerdict[] } | { id: number; error: string } | { ready: true };

export interface ThreadedVerifierOptions {
  /** CPU time one view may take on its thread. */
  deadlineMs: number;
  threads: number;
}

/**
 * How to start a thread: the thread's module beside this one, `.js` from the build; from source (tsx, tests) its
 * `.ts`, loaded after registering tsx's loader in the thread (Node 20 does not apply a `--import tsx` given in a
 * worker's `execArgv` to the worker's own entry).
 */
function threadEntry(): { script: string | URL; eval: boolean } {
  const fromSource = import.meta.url.endsWith('.ts');
  const thread = new URL(`./deterministic-verifier.thread.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSource) return { script: thread, eval: false };
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('tsx/package.json');
  const exported = (
    JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }
  ).exports['./esm/api']!.import.default;
  const api = pathToFileURL(path.join(path.dirname(manifest), exported)).href;
  return {
    script: `import(${JSON.stringify(api)}).then(({ register }) => { register(); return import(${JSON.stringify(thread.href)}); });`,
    eval: true,
  };
}

interface Job {
  request: VerifyRequest;
  resolve(verdicts: ObligationVerdict[]): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
  /** Loaded: the deadline of a view starts when a loaded thread takes it, not while the thread starts up. */
  ready?: boolean;
  retired?: boolean;
}

export interface ThreadedVerifier extends DerivationVerifier {
  /** Stops every thread; views still waiting are rejected. */
  close(): Promise<void>;
}

export function createThreadedVerifier(options: ThreadedVerifierOptions): ThreadedVerifier {
  // Not capped at the cores: a thread more than cores still lets an honest view through beside a hostile one.
  const size = Math.max(1, options.threads);
  const entry = threadEntry();
  const slots = new Set<Slot>();
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): Slot {
    const slot: Slot = { worker: new Worker(entry.script, { eval: entry.eval }) };
    slots.add(slot);
    slot.worker.on('message', (response: VerifyResponse) => {
      if ('ready' in response) {
        slot.ready = true;
        slot.worker.unref();
        pump();
        return;
      }
      const job = slot.job;
      if (!job || response.id !== job.request.id) return;
      finish(slot);
      if ('verdicts' in response) job.resolve(response.verdicts);
      else job.reject(new Error(`deterministic verifier failed: ${response.error}`));
      // An idle thread does not keep the process alive.
      slot.worker.unref();
      pump();
    });
    slot.worker.on('error', (error) => retire(slot, new Error(`deterministic verifier thread failed: ${error.name}`)));
    slot.worker.on('exit', () => retire(slot, new Error('deterministic verifier thread exited')));
    return slot;
  }

  function finish(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
  }

  /** Stops a thread (past its deadline, aborted, or failed) and rejects the view it held; a fresh one replaces it. */
  function retire(slot: Slot, error: Error): void {
    if (slot.retired) return;
    slot.retired = true;
    const job = slot.job;
    finish(slot);
    slots.delete(slot);
    void slot.worker.terminate();
    job?.reject(error);
    // A thread that failed before it loaded will fail again: the views waiting for it fail now, rather than
    // respawning threads until their audits time out.
    if (!slot.ready) for (const waiting of queue.splice(0)) waiting.reject(error);
    pump();
  }

  function pump(): void {
    while (!closed && queue.length > 0) {
      const slot = [...slots].find((s) => s.ready && !s.job);
      if (!slot) {
        const starting = [...slots].filter((s) => !s.ready).length;
        for (let n = Math.min(size - slots.size, queue.length - starting); n > 0; n--) spawn();
        return;
      }
      const job = queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      // The deadline runs from when a thread takes the view: waiting for one counts against the audit's timeout.
      const running = slot;
      slot.timer = setTimeout(
        () => retire(running, new VerifierDeadlineExceeded(options.deadlineMs)),
        options.deadlineMs,
      );
      slot.worker.postMessage(job.request);
    }
  }

  return {
    id: DETERMINISTIC_VERIFIER_ID,
    version: DETERMINISTIC_VERIFIER_VERSION,
    verify(_content, obligations, evidence, signal) {
      if (closed) return Promise.reject(new Error('deterministic verifier: closed'));
      return new Promise<ObligationVerdict[]>((resolve, reject) => {
        const job: Job = { request: { id: nextId++, obligations, evidence }, resolve, reject };
        // The audit gave up on this view (its timeout): drop it if waiting, stop its thread if running.
        signal.addEventListener(
          'abort',
          () => {
            const waiting = queue.indexOf(job);
            if (waiting >= 0) {
              queue.splice(waiting, 1);
              reject(new Error('verification aborted'));
            }
            const slot = [...slots].find((s) => s.job === job);
            if (slot) retire(slot, new Error('verification aborted'));
          },
          { once: true },
        );
        queue.push(job);
        pump();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('deterministic verifier: closed'));
      await Promise.all(
        [...slots].map((slot) => {
          slot.retired = true;
          slot.job?.reject(new Error('deterministic verifier: closed'));
          finish(slot);
          return slot.worker.terminate();
        }),
      );
      slots.clear();
    },
  };
}
