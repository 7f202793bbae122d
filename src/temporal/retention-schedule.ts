/**
 * The retention sweep's Temporal Schedules: one per tenant, `retention-sweep-<tenant>`, starting the
 * `retentionSweep` workflow every hour. Per tenant rather than one global schedule because there is no tenant
 * registry to iterate cheaply (a `distinct` over the memories is a full scan on FerretDB), and because a tenant's
 * sweep is then isolated: it can be paused, triggered or described on its own, a big backlog in one tenant never
 * delays another, and the overlap policy (skip) keeps at most one sweep per tenant running.
 *
 * Tenants are registered in `retention_sweeps` the first time they write (memoised per process) and the worker
 * re-ensures every registered tenant's schedule at start, so a deleted schedule comes back.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { SweepStateStore } from '../governance/retention/sweep-state-store.js';
import { SearchAttributes } from '../shared/search-attributes.js';
import type { RetentionSweepInput } from './contracts/retention-sweep.contract.js';
import { retentionSweepWorkflow } from './contracts/retention-sweep.contract.js';

export const RETENTION_SWEEP_EVERY = '1 hour';
/** The principal the sweep files erasures as; the erasure policy allows `system` only on retention-expiry by ids. */
export const RETENTION_SWEEP_PRINCIPAL = 'retention-sweep';

export function retentionScheduleId(tenant: string): string {
  return `retention-sweep-${tenant}`;
}

export interface RetentionScheduleOptions {
  client: Client;
  taskQueue: string;
  /** Interval between sweeps (default hourly). */
  every?: string;
  /** Extra input for every run (page size, back-pressure); tests and benchmarks only. */
  input?: Omit<RetentionSweepInput, 'tenant' | 'progress'>;
}

/** Creates the tenant's schedule if it does not exist; returns whether it created it. */
export async function ensureRetentionSchedule(options: RetentionScheduleOptions, tenant: string): Promise<boolean> {
  const args: [RetentionSweepInput] = [{ ...options.input, tenant }];
  try {
    await options.client.schedule.create({
      scheduleId: retentionScheduleId(tenant),
      // Jitter spreads the tenants' sweeps over the first minutes of the hour.
      spec: { intervals: [{ every: options.every ?? RETENTION_SWEEP_EVERY }], jitter: '5 minutes' },
      action: {
        type: 'startWorkflow',
        workflowType: retentionSweepWorkflow.name,
        workflowId: retentionScheduleId(tenant),
        taskQueue: options.taskQueue,
        args,
        typedSearchAttributes: [
          { key: SearchAttributes.tenant, value: tenant },
          { key: SearchAttributes.workflowKind, value: 'retention-sweep' },
        ],
      },
      // One sweep per tenant at a time; after downtime, one catch-up run, not one per missed hour.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    });
    return true;
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) return false;
    throw error;
  }
}

/**
 * Registers tenants and keeps their schedules: `ensure(tenant)` on the write path (one upsert and one create per
 * tenant per process), `ensureAll()` at worker start.
 */
export function createRetentionScheduler(options: RetentionScheduleOptions & { sweeps: SweepStateStore }) {
  const ensured = new Map<string, Promise<void>>();
  return {
    ensure(tenant: string): Promise<void> {
      let done = ensured.get(tenant);
      if (!done) {
        done = (async () => {
          await options.sweeps.register(tenant);
          await ensureRetentionSchedule(options, tenant);
        })();
        // A failure is retried by the next call, not remembered.
        void done.catch(() => ensured.delete(tenant));
        ensured.set(tenant, done);
      }
      return done;
    },
    async ensureAll(): Promise<{ tenants: number; created: number }> {
      const tenants = await options.sweeps.tenants();
      let created = 0;
      for (const tenant of tenants) if (await ensureRetentionSchedule(options, tenant)) created++;
      return { tenants: tenants.length, created };
    },
    /**
     * Whether every registered tenant has its schedule (the operators' readiness reports it): a missing one means that tenant's
     * records are not expiring until the worker next starts and reconciles.
     */
    async status(): Promise<{ registered: number; scheduled: number; missing: number }> {
      const tenants = await options.sweeps.tenants();
      const scheduled = new Set<string>();
      for await (const schedule of options.client.schedule.list()) scheduled.add(schedule.scheduleId);
      const missing = tenants.filter((tenant) => !scheduled.has(retentionScheduleId(tenant))).length;
      return { registered: tenants.length, scheduled: tenants.length - missing, missing };
    },
    /** Tenants this process ensured a schedule for. */
    ensured(): string[] {
      return [...ensured.keys()];
    },
    /** Stops sweeping a tenant (offboarding): deletes its schedule and its registration. Idempotent. */
    async retire(tenant: string): Promise<void> {
      ensured.delete(tenant);
      try {
        await options.client.schedule.getHandle(retentionScheduleId(tenant)).delete();
      } catch (error) {
        if (!(error instanceof ScheduleNotFoundError)) throw error;
      }
      await options.sweeps.unregister(tenant);
    },
  };
}
export type RetentionScheduler = ReturnType<typeof createRetentionScheduler>;
