import { proxyActivities } from '@temporalio/workflow';
import type { createConnectivityActivities } from '../activities/connectivity.activities.js';
import type { ReadinessReport } from '../src/observability/readiness.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';

const { checkDependencies } = proxyActivities<ReturnType<typeof createConnectivityActivities>>(RetryProfiles.quick);

/** Runs one activity on a worker and returns what that worker can reach. */
export async function connectivityCheck(): Promise<ReadinessReport> {
  return checkDependencies();
}
