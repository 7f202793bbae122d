/** The access request's activities over a test app's services, with some of their ports swapped (a held or failing store). */
import { createAccessActivities, type AccessActivityDeps } from '../../activities/access.activities.js';
import type { Services } from '../../app/services.js';

export function accessActivitiesOver(s: Services, swapped: Partial<AccessActivityDeps> = {}) {
  return createAccessActivities({
    access: s.access,
    receipts: s.receipts,
    events: s.events,
    memories: s.memories,
    lineage: s.lineage,
    holds: s.holds,
    disputes: s.disputes,
    erasures: s.erasureRequests,
    fingerprints: s.fingerprints,
    macs: s.tenantMacs,
    exposuresOfMany: (t, ids) => s.exposures.exposuresOfMany(t, ids),
    audit: s.audit,
    signer: s.signer,
    notifier: s.notifier,
    dpoEmail: 'dpo@example.test',
    ...swapped,
  });
}
