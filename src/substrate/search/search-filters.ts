/**
 * The filter clauses shared by the BM25 query and `knn.filter`: one builder, so both halves of a hybrid
 * query always see the same constraints. Pure code.
 */
import type { estypes } from '@elastic/elasticsearch';
import type { SearchFilters } from './search-index.port.js';

const LIST_FIELDS = [
  ['namespaces', 'namespace'],
  ['scopes', 'scope'],
  ['subjects', 'subjects'],
  ['kinds', 'kind'],
  ['statuses', 'status'],
  ['purposes', 'purpose'],
  ['sensitivities', 'sensitivity'],
] as const satisfies readonly (readonly [keyof SearchFilters, string])[];

/** True when some list filter is empty: nothing is admissible, so there is no need to ask the index. */
export function admitsNothing(filters: SearchFilters): boolean {
  return (
    LIST_FIELDS.some(([key]) => filters[key]?.length === 0) ||
    filters.grants?.length === 0 ||
    (filters.grants?.every((g) => g.sensitivities.length === 0 || g.scopes?.length === 0) ?? false)
  );
}

/** Valid time has not ended at `at`: no `validTo`, or `validTo` after it. */
export function notEndedClause(at: Date): estypes.QueryDslQueryContainer {
  if (Number.isNaN(at.getTime())) throw new RangeError('currentAt must be a valid date');
  return {
    bool: {
      should: [
        { range: { validTo: { gt: at.toISOString() } } },
        { bool: { must_not: [{ exists: { field: 'validTo' } }] } },
      ],
      minimum_should_match: 1,
    },
  };
}

/** One clause per grant, ORed: sensitivity and (for a grant that is not tenant-wide) scope, both. */
export function grantsClause(grants: NonNullable<SearchFilters['grants']>): estypes.QueryDslQueryContainer {
  return {
    bool: {
      should: grants.map((g) => {
        const filter: estypes.QueryDslQueryContainer[] = [{ terms: { sensitivity: [...new Set(g.sensitivities)] } }];
        if (g.scopes !== undefined) filter.push({ terms: { scope: [...new Set(g.scopes)] } });
        return { bool: { filter } };
      }),
      minimum_should_match: 1,
    },
  };
}

/** Valid time `[validFrom, validTo)` contains `at`; a missing `validTo` means still valid. */
export function validAtClause(at: Date): estypes.QueryDslQueryContainer {
  if (Number.isNaN(at.getTime())) throw new RangeError('validAt must be a valid date');
  const t = at.toISOString();
  return {
    bool: {
      filter: [{ range: { validFrom: { lte: t } } }],
      should: [{ range: { validTo: { gt: t } } }, { bool: { must_not: [{ exists: { field: 'validTo' } }] } }],
      minimum_should_match: 1,
    },
  };
}

/**
 * Filter clauses for a tenant: always the tenant term (defence in depth behind the per-tenant alias),
 * then one clause per given filter. An empty list becomes `terms: []`, which matches nothing.
 */
export function buildFilterClauses(tenant: string, filters: SearchFilters): estypes.QueryDslQueryContainer[] {
  const clauses: estypes.QueryDslQueryContainer[] = [{ term: { tenant } }];
  for (const [key, field] of LIST_FIELDS) {
    const values = filters[key];
    if (values !== undefined) clauses.push({ terms: { [field]: [...new Set(values)] } });
  }
  if (filters.validAt !== undefined) clauses.push(validAtClause(filters.validAt));
  if (filters.currentAt !== undefined) clauses.push(notEndedClause(filters.currentAt));
  if (filters.grants !== undefined)
    clauses.push(filters.grants.length === 0 ? { terms: { scope: [] } } : grantsClause(filters.grants));
  return clauses;
}
