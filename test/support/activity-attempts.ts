/**
 * What a workflow's history says about one activity: how often it was scheduled, which attempts ran, and how
 * they failed. The reliability tests read it to prove that a fault reached the step it was aimed at (the step's
 * activity failed or was retried) rather than passing by.
 */
import type { WorkflowHandle } from '@temporalio/client';

/** An activity's attempts, from the history and, while it is pending, from the workflow's description. */
export interface ActivityAttempts {
  scheduled: number;
  /** The highest attempt that started (the pending one's included). */
  maxAttempt: number;
  /** Attempts that failed or timed out and were retried (a pending attempt > 1 counts those before it). */
  retried: number;
  /** Failures that ended the activity (its retries exhausted): the step then went to an operator. */
  failed: number;
  /** Completions, and whether the first completed on its first attempt (the fault then missed it). */
  completed: number;
  firstCompletedAttempt: number | undefined;
  /** Failure messages, de-duplicated (error messages carry ids and counts only). */
  failures: string[];
}

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

export async function activityAttempts(handle: WorkflowHandle, activity: string): Promise<ActivityAttempts> {
  const events: HistoryEvent[] = (await handle.fetchHistory()).events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity);
  const ids = new Set(scheduled.map((e) => String(e.eventId)));
  const startedAttempt = new Map<string, number>();
  /** A retried attempt's start records the failure of the attempt before it. */
  const retriedAfter: (string | null | undefined)[] = [];
  for (const e of events) {
    const started = e.activityTaskStartedEventAttributes;
    if (started && ids.has(String(started.scheduledEventId))) {
      startedAttempt.set(String(started.scheduledEventId), started.attempt ?? 1);
      retriedAfter.push(started.lastFailure?.message);
    }
  }
  const ended = (kind: 'activityTaskFailedEventAttributes' | 'activityTaskTimedOutEventAttributes') =>
    events.filter((e) => ids.has(String(e[kind]?.scheduledEventId)));
  const finalFailures = [
    ...ended('activityTaskFailedEventAttributes'),
    ...ended('activityTaskTimedOutEventAttributes'),
  ];
  const completions = events.filter((e) => ids.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)));
  const firstCompleted = completions[0]?.activityTaskCompletedEventAttributes?.scheduledEventId;

  const described = await handle.describe();
  const pending = (described.raw.pendingActivities ?? []).filter((a) => a.activityType?.name === activity);
  const attempts = [...startedAttempt.values(), ...pending.map((a) => a.attempt ?? 1)];
  const messages = [
    ...retriedAfter,
    ...finalFailures.map(
      (e) => (e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes)?.failure?.message,
    ),
    ...pending.map((a) => a.lastFailure?.message),
  ].filter((m): m is string => Boolean(m));
  return {
    scheduled: scheduled.length,
    maxAttempt: Math.max(0, ...attempts),
    // Each execution's attempts beyond its first, finished or pending, are retries; a pending first attempt
    // with a failure recorded is about to be retried.
    retried:
      attempts.reduce((sum, a) => sum + Math.max(0, a - 1), 0) +
      pending.filter((a) => (a.attempt ?? 1) === 1 && a.lastFailure).length,
    failed: finalFailures.length,
    completed: completions.length,
    firstCompletedAttempt: firstCompleted === undefined ? undefined : startedAttempt.get(String(firstCompleted)),
    failures: [...new Set(messages)],
  };
}
