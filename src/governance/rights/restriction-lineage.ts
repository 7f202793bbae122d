/**
 * A restriction follows lineage as an erasure does: the records derived from the subject's records (views,
 * summaries, restatements), whatever subjects they are labelled with, are restricted with them. Found once, at
 * filing; nothing is derived from a restricted record afterwards (the processing judge refuses to cite or
 * consolidate it), so the set stays whole while the restriction stands.
 */
import type { EventStore } from '../../substrate/events/event-store.js';
import type { TenantMacs } from '../../substrate/fingerprint.js';
import type { LineageStore } from '../../substrate/lineage/lineage-store.js';
import type { MemoryStore } from '../../substrate/memories/memory-store.js';
import { DomainError, ErrorType } from '../../shared/errors.js';
import { selectorReach } from './selector-preview.js';
import { MAX_DERIVED_PER_RESTRICTION } from './restriction.js';

export interface RestrictionLineageDeps {
  events: EventStore;
  memories: MemoryStore;
  lineage: LineageStore;
  /** The tenants' keys of content hashes (what a selector by content digest is looked up under). */
  macs: TenantMacs;
}

/** Ids of the records derived from the subject's records that are not themselves found by the subject. */
export async function derivedFromSubject(
  deps: RestrictionLineageDeps,
  tenant: string,
  subjectId: string,
): Promise<string[]> {
  const { locatedSet, wanted } = await selectorReach(deps, tenant, { subjectId });
  const derived = wanted.filter((id) => !locatedSet.has(id)).sort();
  if (derived.length > MAX_DERIVED_PER_RESTRICTION)
    throw new DomainError(
      ErrorType.Conflict,
      `selector: ${derived.length} records derive from this subject's records, more than a restriction follows (${MAX_DERIVED_PER_RESTRICTION}); nothing was filed`,
      'selector',
    );
  return derived;
}
