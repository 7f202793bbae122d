/**
 * What the engine reports to its operators, shaped to the domain: the code that counts never sees the metrics
 * library. Every label is one of the fixed values below (or a route template): never a tenant, principal, subject,
 * request or record id.
 */
export interface Metrics {
  /** An HTTP request answered: its route template (`/v1/tenants/:tenant/…`), never the path it was called with. */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** A write (events or memories) answered: from arrival to the admission's answer. */
  admission(status: number, seconds: number): void;
  /** A governed retrieval answered. */
  retrieval(status: number, seconds: number): void;
  /** A call refused by authentication or the role gate. */
  refused(reason: RefusalReason): void;
  /** A call refused with 429 because a rate budget was spent. */
  rateLimited(budget: RateBudget): void;
  /** A write refused because the tenant's quota was spent. */
  quotaRefused(quota: QuotaKind): void;
  /** One append (or batch of appends) to the audit chain, from the call to its durable entry. */
  auditAppended(seconds: number): void;
  /** One run of an erasure step in an activity attempt. */
  erasureStep(step: string, outcome: 'done' | 'failed', seconds: number): void;
  /** A memory admitted into quarantine, once per reason code (`external-content:tool-output`, …: a fixed set). */
  quarantined(reason: string): void;
  /** Tainted items a retrieval served. */
  taintedServed(items: number): void;
}

export type RefusalReason = 'unauthenticated' | 'foreign-tenant' | 'role';
export type RateBudget = 'principal' | 'tenant' | 'address';
export type QuotaKind = 'writes-per-day' | 'stored-bytes';

/** Open erasure requests across all tenants, read at scrape time. */
export interface ErasureBacklog {
  /** Requests per open state (every open state is present, zero included). */
  byState: Record<string, number>;
  oldestOpenReceivedAt: Date | null;
  earliestOpenDueAt: Date | null;
}

/** Counts nothing: for code built without an operator to report to (unit tests, the CLI). */
export const noMetrics: Metrics = {
  httpRequest: () => undefined,
  admission: () => undefined,
  retrieval: () => undefined,
  refused: () => undefined,
  rateLimited: () => undefined,
  quotaRefused: () => undefined,
  auditAppended: () => undefined,
  erasureStep: () => undefined,
  quarantined: () => undefined,
  taintedServed: () => undefined,
};
