import { Context } from '@temporalio/activity';

/** The type of the activity whose attempt the caller runs in, if any (a test's worker runs in the test's process). */
export function currentActivity(): string | undefined {
  try {
    return Context.current().info.activityType;
  } catch {
    return undefined;
  }
}

/** Whether the caller runs inside an attempt of this activity. */
export function inActivity(type: string): boolean {
  return currentActivity() === type;
}
