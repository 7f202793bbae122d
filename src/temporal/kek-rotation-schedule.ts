/**
 * The KEK rotation's Temporal Schedule: one per deployment (named after its task queue), starting `kekRotation` every
 * `LETHE_KEK_ROTATION_EVERY`. Certificates date the lapse of the log's and backups' copies from this interval, so the
 * worker makes the schedule match its configuration at every start: created when missing, its interval set when it
 * differs, deleted when rotation is explicitly off (then rotation is an operator's `lethe keys rotate`).
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { ROTATION_RUN_ALLOWANCE_MS } from '../governance/erasure/erasure-request.js';
import { SearchAttributes } from '../shared/search-attributes.js';
import { kekRotationWorkflow } from './contracts/kek-rotation.contract.js';

export function kekRotationScheduleId(taskQueue: string): string {
  return `kek-rotation-${taskQueue}`;
}

export type KekScheduleOutcome = 'created' | 'updated' | 'kept' | 'deleted' | 'off';

export async function ensureKekRotationSchedule(options: {
  client: Client;
  taskQueue: string;
  /** Null: rotation is off, and a schedule left from an earlier configuration is deleted. */
  everyMs: number | null;
}): Promise<KekScheduleOutcome> {
  const scheduleId = kekRotationScheduleId(options.taskQueue);
  const handle = options.client.schedule.getHandle(scheduleId);
  if (options.everyMs === null) {
    try {
      await handle.delete();
      return 'deleted';
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return 'off';
      throw error;
    }
  }
  const every = options.everyMs;
  try {
    await options.client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every }] },
      action: {
        type: 'startWorkflow',
        workflowType: kekRotationWorkflow.name,
        workflowId: scheduleId,
        taskQueue: options.taskQueue,
        args: [],
        // The lapse date allows one run this long after the interval: a run past it has failed, and says so.
        workflowRunTimeout: ROTATION_RUN_ALLOWANCE_MS,
        typedSearchAttributes: [{ key: SearchAttributes.workflowKind, value: 'kek-rotation' }],
      },
      // One rotation at a time; after downtime, one catch-up run rather than one per missed interval.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: every },
    });
    return 'created';
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  const current = (await handle.describe()).spec.intervals?.[0]?.every;
  if (current === every) return 'kept';
  await handle.update((previous) => ({
    ...previous,
    spec: { intervals: [{ every }] },
    policies: { ...previous.policies, catchupWindow: every },
  }));
  return 'updated';
}
