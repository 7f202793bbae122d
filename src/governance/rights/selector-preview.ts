import type { EventStore } from '../../substrate/events/event-store.js';
import type { LineageStore } from '../../substrate/lineage/lineage-store.js';
import type { MemoryStore } from '../../substrate/memories/memory-store.js';
import type { Fingerprinter, TenantMacs } from '../../substrate/fingerprint.js';
import type { Selector } from '../erasure/erasure-request.js';
import { isEvent, locateRecordIds } from '../erasure/locate.js';
import type { HoldStore } from '../holds/hold-store.js';
import { holdSubjectHashes } from '../holds/hold-store.js';
import { holdCovers } from '../holds/legal-hold.js';
import { mayProcess } from '../read/processing-judge.js';
import { exportContext, subjectsAnswered } from './access-request.js';

/** A principal that read some of the records: its id, how often, whether they reached its prompts, and when last. */
export interface ReaderOfRecords {
  principal: string;
  retrievals: number;
  prompts: number;
  lastRetrievedAt: Date;
}

export interface SelectorPreviewDeps {
  events: EventStore;
  memories: MemoryStore;
  lineage: LineageStore;
  holds: HoldStore;
  fingerprints: Fingerprinter;
  /** The tenants' keys of content hashes: a selector's plain content digest is keyed to find the rows. */
  macs: TenantMacs;
  readersOf(tenant: string, memoryIds: readonly string[]): Promise<ReaderOfRecords[]>;
}

/** At most this many ids of each list are shown; the counts are always whole. */
export const PREVIEW_ID_LIMIT = 1_000;

export interface SelectorPreview {
  located: { events: number; memories: number };
  /**
   * Records derived from the located ones by lineage (transitively), and those of them about none of the subjects the
   * request answers for (the selector's subject, or the one filed beside it; else the located records' subjects):
   * what an access package of the selector withholds of them.
   */
  derived: { total: number; collateral: number };
  /** Memories of the closure by status; events are counted apart (they have no lifecycle). */
  memoriesByStatus: Record<string, number>;
  events: number;
  /** Records an active legal hold keeps, and the holds (ids) that keep them. */
  held: { records: number; holdIds: string[] };
  /** Principals that read the closure's memories (from exposure tracing). */
  readers: ReaderOfRecords[];
  ids: { located: string[]; derived: string[]; held: string[]; truncated: boolean };
}

/**
 * The records a selector names (`locate`), and every record the lineage closure reaches from them: what an erasure,
 * a preview and an access package of the selector all cover.
 */
export async function selectorReach(
  deps: Pick<SelectorPreviewDeps, 'events' | 'memories' | 'lineage' | 'macs'>,
  tenant: string,
  selector: Selector,
): Promise<{ located: string[]; locatedSet: Set<string>; wanted: string[] }> {
  const located = [...new Set(await locateRecordIds(deps, tenant, selector))];
  const walk = await deps.lineage.closure(tenant, located);
  return { located, locatedSet: new Set(located), wanted: [...new Set([...located, ...walk.derived])] };
}

/**
 * What an erasure (or another right's request) with this selector would reach if filed now: the records its
 * `locate` names, the lineage closure over them, what holds keep, and who has read them. Read-only: nothing is
 * fenced, marked or recorded, so the figures may differ from the request's own by what is written meanwhile. Ids
 * and counts only; the caller shows content separately, to a DPO who asks for it.
 */
export async function previewSelector(
  deps: SelectorPreviewDeps,
  tenant: string,
  selector: Selector,
  subjectId?: string,
): Promise<SelectorPreview> {
  const { locatedSet, wanted } = await selectorReach(deps, tenant, selector);
  const [events, memories] = await Promise.all([
    deps.events.factsOf(tenant, wanted.filter(isEvent)),
    deps.memories.factsOf(
      tenant,
      wanted.filter((id) => !isEvent(id)),
    ),
  ]);
  const records = [
    ...events.map((e) => ({ id: e._id, tenant: e.tenant, subjects: e.subjects, namespace: e.namespace })),
    ...memories.map((m) => ({ id: m._id, tenant: m.tenant, subjects: m.subjects, namespace: m.namespace })),
  ];
  const named = subjectsAnswered(selector, subjectId);
  const about =
    named.length > 0 ? named : [...new Set(records.filter((r) => locatedSet.has(r.id)).flatMap((r) => r.subjects))];
  const derived = records.filter((r) => !locatedSet.has(r.id));
  // What the access package withholds, as the same judge decides it (Art. 15(4)).
  const ctx = exportContext(tenant, about, new Date());
  const collateral = derived.filter((r) => !mayProcess('export', { ...r, _id: r.id }, ctx).allowed);
  const holds = await deps.holds.active(tenant);
  const subjectHashes = (subject: string) => holdSubjectHashes(deps.fingerprints, tenant, subject);
  const heldBy = new Map<string, string>();
  for (const record of records) {
    const hold = holds.find((h) => holdCovers(h, record, subjectHashes));
    if (hold) heldBy.set(record.id, hold._id);
  }
  const memoriesByStatus: Record<string, number> = {};
  for (const m of memories) memoriesByStatus[m.status] = (memoriesByStatus[m.status] ?? 0) + 1;
  const existingLocated = records.filter((r) => locatedSet.has(r.id)).map((r) => r.id);
  const cap = (ids: string[]) => ids.slice(0, PREVIEW_ID_LIMIT);
  const heldIds = [...heldBy.keys()];
  return {
    located: {
      events: existingLocated.filter(isEvent).length,
      memories: existingLocated.filter((id) => !isEvent(id)).length,
    },
    derived: { total: derived.length, collateral: collateral.length },
    memoriesByStatus,
    events: events.length,
    held: { records: heldBy.size, holdIds: [...new Set(heldBy.values())].sort() },
    readers: await deps.readersOf(
      tenant,
      memories.map((m) => m._id),
    ),
    ids: {
      located: cap(existingLocated),
      derived: cap(derived.map((r) => r.id)),
      held: cap(heldIds),
      truncated: Math.max(existingLocated.length, derived.length, heldIds.length) > PREVIEW_ID_LIMIT,
    },
  };
}
