import { checkReadiness, type DependencyProbe, type ReadinessReport } from '../src/observability/readiness.js';

/** Lets a workflow prove that the worker reaches every dependency (used by the demo and operators). */
export function createConnectivityActivities(deps: { probes: readonly DependencyProbe[] }) {
  return {
    async checkDependencies(): Promise<ReadinessReport> {
      return checkReadiness(deps.probes);
    },
  };
}
