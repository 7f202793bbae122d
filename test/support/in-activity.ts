import { Context } from '@temporalio/activity';

/** Whether the caller runs inside an attempt of this activity (a test's worker runs in the test's process). */
export function inActivity(type: string): boolean {
  try {
    return Context.current().info.activityType === type;
  } catch {
    return false;
  }
}
