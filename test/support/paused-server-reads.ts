import type { WorkflowHandle } from '@temporalio/client';

/** A read while a server may be paused or down: bounded, undefined when it fails or does not answer in time. */
export async function bounded<T>(read: Promise<T>, ms = 5000): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([read.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the workflow did, for a failure message: its status, pending activities and the end of its history. */
export async function diagnose(handle: WorkflowHandle): Promise<string> {
  try {
    const described = await handle.describe();
    const pending = (described.raw.pendingActivities ?? []).map((a) => ({
      activity: a.activityType?.name,
      state: a.state,
      attempt: a.attempt,
      lastFailure: a.lastFailure?.message,
    }));
    const history = await handle.fetchHistory();
    const events = (history.events ?? []).slice(-25).map((e) => {
      const [kind, attributes] = Object.entries(e).find(([key, value]) => key.endsWith('EventAttributes') && value) ?? [
        '?',
        {},
      ];
      const failure = (attributes as { failure?: { message?: string; cause?: { message?: string } } }).failure;
      const activity = (attributes as { activityType?: { name?: string } }).activityType?.name;
      return `${e.eventId} ${kind.replace('EventAttributes', '')}${activity ? ` ${activity}` : ''}${failure ? `: ${failure.message}${failure.cause?.message ? ` ← ${failure.cause.message}` : ''}` : ''}`;
    });
    return `workflow ${described.status.name}; pending activities ${JSON.stringify(pending)}\nlast history events:\n  ${events.join('\n  ')}`;
  } catch (error) {
    return `(could not describe the workflow: ${(error as Error).message})`;
  }
}
