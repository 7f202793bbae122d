/**
 * The part of `lethe restore reapply-erasures` that works per erasure request rather than per record: what the
 * erasure removed outside the memories, events, lineage and the index (the side records), and what the request
 * itself kept while it ran (probes, facts, the clear selector, fences, the deletion mark, its holds), brought back
 * by a restore.
 */
import type { Services } from '../../services.js';
import type { DeletionCertificate } from '../../../src/governance/certificates/certificate.js';
import { releaseCompletedRequest } from '../../../src/governance/erasure/completed-request.js';
import type { SideRecordCounts } from '../../../src/governance/erasure/side-records.js';

/** What a request's certificates prove, gathered across the chain. */
export interface CertifiedRequest {
  requestId: string;
  /** Ids the certificates prove erased (closure less what a hold exempted at that time). */
  erased: Set<string>;
  /** Subjects and content hashes of the erased records, from what the restore brought back of them. */
  subjects: Set<string>;
  contentHashes: Set<string>;
  /** The `complete` certificate, once the request has one: nothing of it is held any more. */
  complete: DeletionCertificate | null;
  /** Holds that partial certificates of the request named. */
  holdIds: Set<string>;
}

/** What the per-request pass found again and removed: counts only. */
export interface RequestCounts {
  /** Per side collection, as the erasure's own side-record eraser counts them. */
  side: SideRecordCounts;
  /** Probe documents (samples of erased text) destroyed. */
  probes: number;
  /** Requests whose restored facts (subjects and content hashes of erased records) were dropped. */
  facts: number;
  /** Completed requests whose restored row was running, or still held its clear selector. */
  requests: number;
  fences: number;
  /** Holds a restore made active again although the request's `complete` certificate proves them released. */
  holds: number;
}

export function emptyRequestCounts(): RequestCounts {
  return { side: {}, probes: 0, facts: 0, requests: 0, fences: 0, holds: 0 };
}

const subsetOf = (ids: readonly string[], of: ReadonlySet<string>) => ids.every((id) => of.has(id));

/**
 * Erases again what the request's erasure removed beyond the records, idempotently. Probes and facts go only when
 * every record they name is proven erased: a request still running a later round (a released hold) needs its own.
 * A completed request lets go of everything it kept while it ran, as it did when it completed.
 */
export async function reapplyRequest(
  services: Services,
  tenant: string,
  request: CertifiedRequest,
  counts: RequestCounts,
): Promise<void> {
  const { requestId, erased } = request;
  const facts = await services.erasureSets.getFacts(tenant, requestId);
  const factRecords = [...facts.memories, ...facts.events].filter((r) => erased.has(r._id));
  for (const record of factRecords) {
    record.subjects.forEach((s) => request.subjects.add(s));
    request.contentHashes.add(record.contentHash);
  }
  const probes = await services.probes.get(tenant, requestId);
  const staleProbes = probes !== null && subsetOf(probes.ids, erased);
  if (staleProbes) {
    probes.subjects.forEach((s) => request.subjects.add(s));
    probes.contentHashes.forEach((h) => request.contentHashes.add(h));
  }
  // The erasure's own side-record eraser, with the target it built from the same records.
  const side = await services.sideRecords.erase(tenant, {
    ids: [...erased],
    subjects: [...request.subjects],
    contentHashes: [...request.contentHashes],
  });
  for (const [collection, n] of Object.entries(side)) counts.side[collection] = (counts.side[collection] ?? 0) + n;
  if (staleProbes) {
    await services.probes.destroy(tenant, requestId);
    counts.probes++;
  }
  const factIds = [...facts.memories, ...facts.events].map((r) => r._id);
  if (factIds.length > 0 && subsetOf(factIds, erased)) {
    await services.erasureSets.dropFacts(tenant, requestId);
    counts.facts++;
  }
  if (request.complete) await settleCompleted(services, tenant, request, request.complete, counts);
}

async function settleCompleted(
  services: Services,
  tenant: string,
  request: CertifiedRequest,
  certificate: DeletionCertificate,
  counts: RequestCounts,
): Promise<void> {
  const { requestId } = request;
  const row = await services.erasureRequests.get(tenant, requestId);
  if (row && (row.state !== 'completed' || row.selector != null)) {
    await services.erasureRequests.setState(tenant, requestId, 'completed', 'restored: completed per its certificate');
    await services.erasureRequests.addCertificate(tenant, requestId, certificate.certificateId);
    counts.requests++;
  }
  counts.fences += (
    await releaseCompletedRequest(
      { fences: services.fences, requests: services.erasureRequests, sets: services.erasureSets },
      tenant,
      requestId,
    )
  ).fences;
  // Every record the request marked is purged again by now: reads need not look its marking's guards up.
  await services.memories.closeDeletionMark(tenant, requestId);
  // A `complete` certificate after partial ones means each hold they named no longer held any of the records.
  for (const holdId of request.holdIds) {
    if (!(await services.holds.get(tenant, holdId))?.active) continue;
    await services.holds.release(tenant, holdId, `restore:${certificate.certificateId}`);
    counts.holds++;
  }
}
