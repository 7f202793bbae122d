import type { Runtime } from '../app/runtime.js';
import type { Services } from '../app/services.js';
import { createConnectivityActivities } from '../../activities/connectivity.activities.js';
import { createIngestionActivities } from '../../activities/ingestion.activities.js';

/** Every activity the worker registers, built from the runtime's clients (the composition root). */
export function createAllActivities(runtime: Runtime, services: Services) {
  return {
    ...createConnectivityActivities({ probes: runtime.probes }),
    ...createIngestionActivities({
      events: services.events,
      memories: services.memories,
      lineage: services.lineage,
      tombstones: services.tombstones,
      audit: services.audit,
      impactPolicy: services.impactPolicy,
      staging: services.staging,
      search: services.index,
    }),
  };
}
