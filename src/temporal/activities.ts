import type { Runtime } from '../app/runtime.js';
import { createConnectivityActivities } from '../../activities/connectivity.activities.js';

/** Every activity the worker registers, built from the runtime's clients (the composition root). */
export function createAllActivities(runtime: Runtime) {
  return {
    ...createConnectivityActivities({ probes: runtime.probes }),
  };
}
