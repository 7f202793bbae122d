/**
 * Workflows of `bench/stack.bench.ts` only (bundled by the bench itself, never by the Lethe worker): chains of
 * trivial activities, so that what is measured is the Temporal server's dispatch cost, not work.
 */
import { proxyActivities } from '@temporalio/workflow';

/** The activities the bench registers: each returns a number at once. */
export interface StackBenchActivities {
  benchStep(value: number): Promise<number>;
}

const { benchStep } = proxyActivities<StackBenchActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

/** `steps` activities one after another: each is one activity dispatch and one workflow-task dispatch. */
export async function benchSequentialSteps(steps: number): Promise<number> {
  let value = 0;
  for (let i = 0; i < steps; i++) value = await benchStep(value);
  return value;
}

/** One activity: the unit of the concurrent-throughput measurement. */
export async function benchSingleStep(): Promise<number> {
  return benchStep(0);
}
