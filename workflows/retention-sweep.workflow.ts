import { continueAsNew, defineQuery, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { createRetentionActivities, SweepTotals } from '../activities/retention.activities.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import type { RetentionSweepInput } from '../src/temporal/contracts/retention-sweep.contract.js';
import type { SweepProgress } from '../src/temporal/contracts/retention-sweep.contract.js';
import type { RetentionSweepResult } from '../src/temporal/contracts/retention-sweep.contract.js';

type Activities = ReturnType<typeof createRetentionActivities>;
const quick = proxyActivities<Activities>(RetryProfiles.quick);
const paged = proxyActivities<Activities>(RetryProfiles.longPurge);

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
