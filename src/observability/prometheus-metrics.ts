import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ErasureBacklog, Metrics } from './metrics.port.js';

const REASON_CODE = /^[a-z]+(?:-[a-z]+)*:[a-z]+(?:-[a-z]+)*$/;

/** The metrics port over a Prometheus registry of its own, and what `/metrics` serves from it. */
export interface PrometheusMetrics extends Metrics {
  readonly contentType: string;
  /** The text exposition of every series, open erasure requests read from the store now. */
  render(): Promise<string>;
}

export interface PrometheusMetricsOptions {
  /** Reads the open erasure requests at scrape time; one process (the API) serves them, so they are not summed twice. */
  erasureBacklog?: () => Promise<ErasureBacklog>;
  /** The Node.js process's own series (CPU, memory, event-loop lag, GC): for a process's composition root. */
  processMetrics?: boolean;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STEP_BUCKETS = [0.05, 0.25, 1, 5, 15, 60, 300, 900, 3600];
/** Every scrape's gauges share one read of the backlog rather than one each. */
const BACKLOG_SHARED_MS = 1000;

const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;

/**
 * A registry per instance, so that several apps in one process (tests) never register a series twice; a process
 * creates one at its composition root.
 */
export function createPrometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'lethe_' });

  const http = new Histogram({
    name: 'lethe_http_request_duration_seconds',
    help: 'HTTP requests answered, by route template, method and status class',
    labelNames: ['route', 'method', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const admission = new Histogram({
    name: 'lethe_admission_duration_seconds',
    help: 'Writes of events and memories, from arrival to the answer of their admission, by status class',
    labelNames: ['status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const retrieval = new Histogram({
    name: 'lethe_retrieval_duration_seconds',
    help: 'Governed retrievals, by status class',
    labelNames: ['status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const refusals = new Counter({
    name: 'lethe_refusals_total',
    help: 'Calls refused by authentication or the role gate, by reason',
    labelNames: ['reason'] as const,
    registers,
  });
  const rateLimited = new Counter({
    name: 'lethe_rate_limited_total',
    help: 'Calls refused with 429, by the budget that was spent',
    labelNames: ['budget'] as const,
    registers,
  });
  const quotaRefusals = new Counter({
    name: 'lethe_quota_refusals_total',
    help: "Writes refused because a tenant's quota was spent, by quota",
    labelNames: ['quota'] as const,
    registers,
  });
  const auditAppend = new Histogram({
    name: 'lethe_audit_append_duration_seconds',
    help: 'Appends to the audit chain, from the call to the durable entry',
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const erasureStep = new Histogram({
    name: 'lethe_erasure_step_duration_seconds',
    help: 'Runs of an erasure step in one activity attempt, by step and outcome',
    labelNames: ['step', 'outcome'] as const,
    buckets: STEP_BUCKETS,
    registers,
  });

  const quarantined = new Counter({
    name: 'lethe_quarantined_total',
    help: 'Memories admitted into quarantine for a reviewer, by reason code (an anomaly or injection alert)',
    labelNames: ['reason'] as const,
    registers,
  });
  const taintedServed = new Counter({
    name: 'lethe_retrieval_tainted_items_total',
    help: 'Tainted items served by retrievals',
    registers,
  });

  if (options.erasureBacklog) registerBacklogGauges(registry, options.erasureBacklog);

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    httpRequest: (route, method, status, seconds) =>
      http.observe({ route, method, status_class: statusClass(status) }, seconds),
    admission: (status, seconds) => admission.observe({ status_class: statusClass(status) }, seconds),
    retrieval: (status, seconds) => retrieval.observe({ status_class: statusClass(status) }, seconds),
    refused: (reason) => refusals.inc({ reason }),
    rateLimited: (budget) => rateLimited.inc({ budget }),
    quotaRefused: (quota) => quotaRefusals.inc({ quota }),
    auditAppended: (seconds) => auditAppend.observe(seconds),
    erasureStep: (step, outcome, seconds) => erasureStep.observe({ step, outcome }, seconds),
    // Admission's codes are `<class>:<kind>` in lower-case words; anything else is counted as `other`, never written.
    quarantined: (reason) => quarantined.inc({ reason: REASON_CODE.test(reason) ? reason : 'other' }),
    taintedServed: (items) => taintedServed.inc(items),
  };
}

function registerBacklogGauges(registry: Registry, read: () => Promise<ErasureBacklog>): void {
  const registers = [registry];
  let shared: { at: number; backlog: Promise<ErasureBacklog | null> } | undefined;
  // A store that does not answer makes the backlog series vanish and `up` 0, never the whole scrape fail.
  const backlog = () => {
    const now = performance.now();
    if (!shared || now - shared.at > BACKLOG_SHARED_MS) {
      shared = { at: now, backlog: read().catch(() => null) };
    }
    return shared.backlog;
  };
  new Gauge({
    name: 'lethe_erasure_backlog_up',
    help: 'Whether the open erasure requests could be read at this scrape (1) or not (0)',
    registers,
    async collect() {
      this.set((await backlog()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'lethe_erasure_requests',
    help: 'Open erasure requests across all tenants, by state',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const b = await backlog();
      this.reset();
      for (const [state, n] of Object.entries(b?.byState ?? {})) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'lethe_erasure_needs_operator',
    help: 'Erasure requests waiting for an operator (the runbook named in the request says what to do)',
    registers,
    async collect() {
      this.set((await backlog())?.byState['needs-operator'] ?? 0);
    },
  });
  new Gauge({
    name: 'lethe_erasure_oldest_open_age_seconds',
    help: 'Age of the oldest open erasure request (0 when none is open)',
    registers,
    async collect() {
      const oldest = (await backlog())?.oldestOpenReceivedAt;
      this.set(oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
    },
  });
  new Gauge({
    name: 'lethe_erasure_due_in_seconds',
    help: 'Seconds to the earliest GDPR due date of an open erasure request (negative once overdue; +Inf when none is open)',
    registers,
    async collect() {
      const due = (await backlog())?.earliestOpenDueAt;
      this.set(due ? (due.getTime() - Date.now()) / 1000 : Infinity);
    },
  });
}
