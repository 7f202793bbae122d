/**
 * Where a consolidation run's time goes, from its Temporal history and its children's (server clock): the planning
 * activity, the pauses (timers), each view's ingestion child workflow, and, inside the children, the time per
 * activity type (scheduled → completed, summed). For `bench/consolidation.bench.ts`.
 */
import type { Client } from '@temporalio/client';
import { msOf } from './lifecycle-admission.js';

export interface RunBreakdown {
  /** Workflow started → closed. */
  workflowMs: number;
  planMs: number;
  pauseMs: number;
  timers: number;
  /** Child ingestion workflows, initiated → completed, summed; and how many. */
  childMs: number;
  children: number;
  /** Inside the children: activity type → ms summed over all children. */
  childActivities: Map<string, number>;
}

type History = Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>;

function activityTimes(history: History, into: Map<string, number>): void {
  const scheduled = new Map<string, { type: string; at: number }>();
  for (const e of history.events ?? []) {
    const at = msOf(e.eventTime);
    if (e.activityTaskScheduledEventAttributes) {
      scheduled.set(String(e.eventId), { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
    } else if (e.activityTaskCompletedEventAttributes) {
      const s = scheduled.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId));
      if (s) into.set(s.type, (into.get(s.type) ?? 0) + (at - s.at));
    }
  }
}

/** The breakdown of the latest run of `workflowId`. */
export async function runBreakdown(client: Client, workflowId: string): Promise<RunBreakdown> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const top = new Map<string, number>();
  activityTimes(history, top);
  const timers = new Map<string, number>();
  const initiated = new Map<string, number>();
  const children: { workflowId: string; runId: string }[] = [];
  let pauseMs = 0;
  let childMs = 0;
  for (const e of events) {
    const at = msOf(e.eventTime);
    if (e.timerStartedEventAttributes) timers.set(String(e.eventId), at);
    else if (e.timerFiredEventAttributes)
      pauseMs += at - (timers.get(String(e.timerFiredEventAttributes.startedEventId)) ?? at);
    else if (e.startChildWorkflowExecutionInitiatedEventAttributes) initiated.set(String(e.eventId), at);
    else if (e.childWorkflowExecutionStartedEventAttributes) {
      const execution = e.childWorkflowExecutionStartedEventAttributes.workflowExecution;
      if (execution?.workflowId && execution.runId)
        children.push({ workflowId: execution.workflowId, runId: execution.runId });
    } else if (e.childWorkflowExecutionCompletedEventAttributes)
      childMs += at - (initiated.get(String(e.childWorkflowExecutionCompletedEventAttributes.initiatedEventId)) ?? at);
  }
  const childActivities = new Map<string, number>();
  for (const child of children)
    activityTimes(await client.workflow.getHandle(child.workflowId, child.runId).fetchHistory(), childActivities);
  return {
    workflowMs: events.length > 0 ? msOf(events[events.length - 1]!.eventTime) - msOf(events[0]!.eventTime) : NaN,
    planMs: top.get('planConsolidation') ?? 0,
    pauseMs,
    timers: timers.size,
    childMs,
    children: children.length,
    childActivities,
  };
}
