import { describe, expect, it } from 'vitest';
import { admitsNothing, buildFilterClauses, validAtClause } from '../../../src/substrate/search/search-filters.js';

describe('search filters', () => {
  it('always filters on the tenant, even with no other filter', () => {
    expect(buildFilterClauses('t-1', {})).toEqual([{ term: { tenant: 't-1' } }]);
  });

  it('turns each list filter into a terms clause on its field, without duplicates', () => {
    const clauses = buildFilterClauses('t-1', {
      namespaces: ['crm', 'crm'],
      subjects: ['s1'],
      kinds: ['fact'],
      statuses: ['active', 'disputed'],
      purposes: ['support'],
      sensitivities: ['internal'],
    });
    expect(clauses).toEqual([
      { term: { tenant: 't-1' } },
      { terms: { namespace: ['crm'] } },
      { terms: { subjects: ['s1'] } },
      { terms: { kind: ['fact'] } },
      { terms: { status: ['active', 'disputed'] } },
      { terms: { purpose: ['support'] } },
      { terms: { sensitivity: ['internal'] } },
    ]);
  });

  it('treats an empty list as admitting nothing (default deny), an omitted one as no constraint', () => {
    expect(admitsNothing({ namespaces: [] })).toBe(true);
    expect(admitsNothing({ namespaces: ['a'], statuses: [] })).toBe(true);
    expect(admitsNothing({ namespaces: ['a'] })).toBe(false);
    expect(admitsNothing({})).toBe(false);
    expect(buildFilterClauses('t-1', { statuses: [] })).toContainEqual({ terms: { status: [] } });
  });

  it('reads valid time as [validFrom, validTo) with an open end when validTo is missing', () => {
    const at = new Date('2025-03-01T00:00:00.000Z');
    expect(validAtClause(at)).toEqual({
      bool: {
        filter: [{ range: { validFrom: { lte: '2025-03-01T00:00:00.000Z' } } }],
        should: [
          { range: { validTo: { gt: '2025-03-01T00:00:00.000Z' } } },
          { bool: { must_not: [{ exists: { field: 'validTo' } }] } },
        ],
        minimum_should_match: 1,
      },
    });
    expect(buildFilterClauses('t-1', { validAt: at })).toHaveLength(2);
    expect(() => validAtClause(new Date('nope'))).toThrow(RangeError);
  });

  it("ORs a reader's grants, each a pair of sensitivity and (unless tenant-wide) scope, never their cross-product", () => {
    const [, grants] = buildFilterClauses('t-1', {
      grants: [
        { sensitivities: ['public', 'internal', 'confidential'], scopes: ['principal:carl', 'tenant'] },
        { sensitivities: ['public', 'internal'] },
      ],
    });
    expect(grants).toEqual({
      bool: {
        should: [
          {
            bool: {
              filter: [
                { terms: { sensitivity: ['public', 'internal', 'confidential'] } },
                { terms: { scope: ['principal:carl', 'tenant'] } },
              ],
            },
          },
          { bool: { filter: [{ terms: { sensitivity: ['public', 'internal'] } }] } },
        ],
        minimum_should_match: 1,
      },
    });
    expect(admitsNothing({ grants: [] })).toBe(true);
    expect(admitsNothing({ grants: [{ sensitivities: [] }] })).toBe(true);
    expect(
      admitsNothing({ grants: [{ sensitivities: ['internal'], scopes: [] }, { sensitivities: ['public'] }] }),
    ).toBe(false);
  });

  it('keeps, for a current question, only records whose valid time has not ended', () => {
    const [, current] = buildFilterClauses('t-1', { currentAt: new Date('2026-06-01T00:00:00Z') });
    expect(current).toEqual({
      bool: {
        should: [
          { range: { validTo: { gt: '2026-06-01T00:00:00.000Z' } } },
          { bool: { must_not: [{ exists: { field: 'validTo' } }] } },
        ],
        minimum_should_match: 1,
      },
    });
    expect(() => buildFilterClauses('t-1', { currentAt: new Date('nope') })).toThrow(RangeError);
  });
});
