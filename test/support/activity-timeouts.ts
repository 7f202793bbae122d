/**
 * Activity timeouts on a task queue, from its workflows' histories: the sign that something held a worker's event
 * loop (an activity that cannot heartbeat, or finish, in time). A timeout that was retried leaves no event of its
 * own in the history: the next attempt's start carries it as `lastFailure`, and a pending attempt shows it in the
 * workflow's description, so all three are counted.
 */
import type { Client } from '@temporalio/client';

export interface ActivityTimeouts {
  /** Workflows read. */
  workflows: number;
  /** Timeouts by kind (`HEARTBEAT`, `START_TO_CLOSE`, …). */
  byType: Record<string, number>;
  total: number;
}

const TIMEOUT_TYPES: Record<number, string> = {
  1: 'START_TO_CLOSE',
  2: 'SCHEDULE_TO_START',
  3: 'SCHEDULE_TO_CLOSE',
  4: 'HEARTBEAT',
};

interface FailureLike {
  timeoutFailureInfo?: { timeoutType?: number | string | null } | null;
  cause?: FailureLike | null;
}

/** The timeout a failure is (or is caused by), if any. */
function timeoutOf(failure: FailureLike | null | undefined): string | undefined {
  for (let f = failure; f; f = f.cause) {
    const type = f.timeoutFailureInfo?.timeoutType;
    if (type !== undefined && type !== null)
      return typeof type === 'number' ? (TIMEOUT_TYPES[type] ?? String(type)) : type;
  }
  return undefined;
}

/** Counts every activity timeout of the workflows that ran on `taskQueue` (visibility may lag a second or two). */
export async function activityTimeoutsOn(client: Client, taskQueue: string): Promise<ActivityTimeouts> {
  const result: ActivityTimeouts = { workflows: 0, byType: {}, total: 0 };
  const count = (type: string | undefined) => {
    if (type === undefined) return;
    result.byType[type] = (result.byType[type] ?? 0) + 1;
    result.total++;
  };
  for await (const execution of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
    result.workflows++;
    const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
    for (const e of (await handle.fetchHistory()).events ?? []) {
      if (e.activityTaskTimedOutEventAttributes) count(timeoutOf(e.activityTaskTimedOutEventAttributes.failure) ?? '?');
      count(timeoutOf(e.activityTaskStartedEventAttributes?.lastFailure));
    }
    if (execution.status.name === 'RUNNING') {
      for (const a of (await handle.describe()).raw.pendingActivities ?? []) count(timeoutOf(a.lastFailure));
    }
  }
  return result;
}
