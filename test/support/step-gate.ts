/**
 * Holds an activity at its start until the test has done what it wants at that step boundary: the way to
 * land a write exactly between two steps of a running workflow, instead of hoping a poll catches it.
 */
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';
import { Context } from '@temporalio/activity';

/** Called before an activity runs, with its type and first argument; the activity waits for the promise. */
export type BoundaryHook = (activityType: string, input: Record<string, unknown>) => Promise<void>;

export function stepGate(hook: BoundaryHook): ActivityInterceptorsFactory {
  return () => ({
    inbound: {
      async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>) {
        const first = (input.args[0] ?? {}) as Record<string, unknown>;
        await hook(Context.current().info.activityType, first);
        return next(input);
      },
    },
  });
}
