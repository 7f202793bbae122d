/**
 * The reader's grants as index filters, so that a record the reader may not see never fills a top-k slot: the
 * same grants the read judge applies after the index answers (scope and sensitivity per grant, ORed), the
 * intent's statuses, and valid time (`current`: not ended; `as-of`: containing the instant). Pure code.
 */
import { contentGrants, type Reader } from '../governance/read/reader.js';
import { INTENT_STATUSES } from '../governance/read/admissibility.js';
import type { SearchFilters } from '../substrate/search/search-index.port.js';

export function indexFiltersFor(reader: Reader): SearchFilters {
  return {
    statuses: [...INTENT_STATUSES[reader.intent]],
    grants: contentGrants(reader).map((g) => ({
      sensitivities: [...g.sensitivities],
      ...(g.scopes === 'all' ? {} : { scopes: [...g.scopes] }),
    })),
    ...(reader.intent === 'current' ? { currentAt: reader.now } : {}),
    ...(reader.intent === 'as-of' && reader.asOf ? { validAt: reader.asOf } : {}),
  };
}
