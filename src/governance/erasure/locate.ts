import type { EventStore } from '../../substrate/events/event-store.js';
import type { MemoryStore } from '../../substrate/memories/memory-store.js';
import type { TenantMacs } from '../../substrate/fingerprint.js';
import { storedDigestForms } from '../../substrate/content-hash.js';
import type { Selector } from './erasure-request.js';

export const isEvent = (id: string) => id.startsWith('evt_');

/**
 * Every record the selector names now, within the tenant only — whatever its status: a record marked deleted
 * (by an erasure's earlier attempt or by another) still holds its bytes until it is purged. What an erasure's
 * `locate` step reaches, and what a DPO's preview shows before filing.
 */
export async function locateRecordIds(
  stores: { events: EventStore; memories: MemoryStore; macs: TenantMacs },
  tenant: string,
  selector: Selector,
): Promise<string[]> {
  const { events, memories } = stores;
  if ('subjectId' in selector) {
    const [e, m] = await Promise.all([
      events.idsBySubject(tenant, selector.subjectId, { includeDeleted: true }),
      memories.idsBySubject(tenant, selector.subjectId),
    ]);
    return [...e, ...m];
  }
  if ('memoryIds' in selector) return (await memories.getMany(tenant, selector.memoryIds)).map((r) => r._id);
  if ('contentFingerprint' in selector) {
    // The DPO names content by its plain SHA-256; rows store it keyed (under whichever key was current) or, written
    // before keying and not yet re-keyed, plain: every form is looked for.
    const forms = storedDigestForms(stores.macs, tenant, selector.contentFingerprint);
    const [e, m] = await Promise.all([
      events.idsByContentHashes(tenant, forms),
      memories.idsByContentHashes(tenant, forms),
    ]);
    return [...e, ...m];
  }
  if ('validTime' in selector) {
    return memories.idsByTime(tenant, 'validFrom', new Date(selector.validTime.from), new Date(selector.validTime.to));
  }
  const from = new Date(selector.transactionTime.from);
  const to = new Date(selector.transactionTime.to);
  const [e, m] = await Promise.all([
    events.idsByRecordedAt(tenant, from, to),
    memories.idsByTime(tenant, 'recordedAt', from, to),
  ]);
  return [...e, ...m];
}
