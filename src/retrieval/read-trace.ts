/**
 * Exposure tracing on every content path: each read that hands record content to a caller — retrieval, search,
 * a read by id — is recorded as a retrieval of those ids (who, for what purpose and intent, when, a keyed hash of
 * the query or id, never its text). An erasure's exposure statement then counts every time an erased record
 * reached a reader, whichever route it took.
 */
import { randomUUID } from 'node:crypto';
import type { TenantMacs } from '../substrate/fingerprint.js';
import type { Reader } from '../governance/read/reader.js';
import type { ExposureStore, ReadRoute } from './exposure-store.js';

export interface ReadTrace {
  /** Records the read and returns its retrieval id (`rtv_…`), under which the agent reports prompts. */
  recordRead(reader: Reader, route: ReadRoute, query: string, ids: readonly string[]): Promise<string>;
}

export function createReadTrace(deps: { exposures: ExposureStore; macs: TenantMacs }): ReadTrace {
  return {
    async recordRead(reader, route, query, ids) {
      const tenant = reader.principal.tenant;
      const retrievalId = `rtv_${randomUUID()}`;
      await deps.exposures.recordRetrieval(
        {
          _id: retrievalId,
          tenant,
          principal: reader.principal.id,
          purpose: reader.purpose,
          intent: reader.intent,
          route,
          // Under the tenant's own key: equal queries of two tenants hash apart.
          queryHash: deps.macs.of(tenant, 'retrieval-query', query),
          returned: ids.length,
          at: new Date(),
        },
        ids,
      );
      return retrievalId;
    },
  };
}
