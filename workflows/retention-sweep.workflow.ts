import { continueAsNew, defineQuery, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { createRetentionActivities, SweepTotals } from '../activities/retention.activities.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';

type Activities = ReturnType<typeof createRetentionActivities>;
const quick = proxyActivities<Activities>(RetryProfiles.quick);
const paged = proxyActivities<Activities>(RetryProfiles.longPurge);

export interface RetentionSweepInput {
  tenant: string;
  /** Records per marking activity (default 1 000, at most 5 000). */
  pageSize?: number;
  /** Records per erasure request, one hand-off activity each (default `pageSize`, at most 5 000). */
  erasureBatchSize?: number;
  /** Activities per run before continuing as new, to bound the history (default 200). */
  stepsPerRun?: number;
  /**
   * Erasures of the tenant allowed at work at once before the hand-off waits (default 1: two erasures of one tenant
   * share its index, whose expunge and verification steps wait for zero deleted documents).
   */
  maxOpenErasures?: number;
  /** Minutes a run keeps handing off under back-pressure before leaving the rest to the next run (default 50). */
  handOffMinutes?: number;
  /** How long to wait when throttled (default 30 s). */
  pollEvery?: Parameters<typeof sleep>[0];
  /** Sweep from this instant or `YYYY-MM-DDTHH` bucket instead of the watermark (after a migration). */
  rescanFrom?: string;
  /** Where the sweep stands; set by the workflow itself when it continues as new. */
  progress?: SweepProgress;
}

export interface SweepProgress {
  phase: 'mark' | 'handoff';
  bucket: string;
  until: string;
  /** Epoch ms after which the hand-off stops waiting on back-pressure. */
  handOffUntil: number;
  totals: SweepTotals;
}

export interface RetentionSweepResult extends SweepTotals {
  until: string;
  /** Records left expired but not yet handed to erasure (back-pressure); the next run continues. */
  pendingLeft: boolean;
}

export const retentionProgressQuery = defineQuery<SweepProgress | null>('retentionProgress');

const MINUTE = 60_000;

function add(a: SweepTotals, b: Partial<SweepTotals>): SweepTotals {
  return {
    scanned: a.scanned + (b.scanned ?? 0),
    expired: a.expired + (b.expired ?? 0),
    handedOff: a.handedOff + (b.handedOff ?? 0),
    erasures: a.erasures + (b.erasures ?? 0),
    requeued: a.requeued + (b.requeued ?? 0),
    gone: a.gone + (b.gone ?? 0),
  };
}

/**
 * One tenant's retention sweep, started by the tenant's Temporal Schedule (hourly). Two phases, each a paged loop
 * of coarse activities whose results are counts only:
 *  1. mark: walk the hour buckets from the watermark (less a look-back) to the current hour; each page moves
 *     expired `active` records to `expired` (no longer served) and queues every expired record for erasure;
 *  2. hand off: file one erasure request (ground retention-expiry, by ids) per page of queued records, waiting
 *     while too many of the tenant's erasures are at work. Legal holds are the erasure's to honour: held records
 *     stay (request `partial`) until the hold is released.
 * Continues as new every `stepsPerRun` activities, so 10⁶ records never make one long history.
 */
export async function retentionSweep(input: RetentionSweepInput): Promise<RetentionSweepResult> {
  const pageSize = input.pageSize ?? 1000;
  const stepsPerRun = input.stepsPerRun ?? 200;
  const maxOpenErasures = input.maxOpenErasures ?? 1;
  const erasureBatchSize = input.erasureBatchSize ?? pageSize;
  const pollEvery = input.pollEvery ?? '30 seconds';
  const { tenant } = input;

  let progress: SweepProgress;
  if (input.progress) {
    progress = input.progress;
  } else {
    const plan = await quick.planRetentionSweep({
      tenant,
      now: new Date(Date.now()).toISOString(),
      ...(input.rescanFrom !== undefined ? { rescanFrom: input.rescanFrom } : {}),
    });
    progress = {
      phase: 'mark',
      bucket: plan.from,
      until: plan.until,
      handOffUntil: 0,
      totals: { scanned: 0, expired: 0, handedOff: 0, erasures: 0, requeued: 0, gone: 0 },
    };
  }
  setHandler(retentionProgressQuery, () => progress);

  let steps = 0;
  const budget = async () => {
    if (++steps < stepsPerRun) return;
    await continueAsNew<typeof retentionSweep>({ ...input, progress });
  };

  while (progress.phase === 'mark') {
    const page = await paged.markExpiredPage({ tenant, bucket: progress.bucket, until: progress.until, pageSize });
    progress.totals = add(progress.totals, page);
    if (page.next === null) {
      await quick.completeMarking({ tenant, until: progress.until });
      progress.phase = 'handoff';
      progress.handOffUntil = Date.now() + (input.handOffMinutes ?? 50) * MINUTE;
    } else {
      progress.bucket = page.next;
    }
    await budget();
  }

  let pendingLeft = false;
  for (;;) {
    const result = await paged.handOffExpired({ tenant, pageSize: erasureBatchSize, maxOpenErasures });
    progress.totals = add(progress.totals, {
      handedOff: result.handedOff,
      gone: result.gone,
      erasures: result.requestId ? 1 : 0,
    });
    if (!result.more) break;
    if (result.throttled) {
      if (Date.now() >= progress.handOffUntil) {
        pendingLeft = true;
        break;
      }
      await sleep(pollEvery);
    }
    await budget();
  }

  await quick.recordSweep({ tenant, until: progress.until, runId: workflowInfo().runId, totals: progress.totals });
  return { ...progress.totals, until: progress.until, pendingLeft };
}
