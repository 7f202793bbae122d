import type { EventStore } from '../../substrate/events/event-store.js';
import type { LineageStore } from '../../substrate/lineage/lineage-store.js';
import type { MemoryStore } from '../../substrate/memories/memory-store.js';
import type { EventRecord, MemoryRecord } from '../../substrate/model/records.js';
import type { Fingerprinter, TenantMacs } from '../../substrate/fingerprint.js';
import { canonicalJson } from '../../shared/canonical-json.js';
import type { DisputeStore } from '../disputes/dispute-store.js';
import type { ErasureRequestStore } from '../erasure/erasure-request-store.js';
import { isEvent } from '../erasure/locate.js';
import { selectorReach } from './selector-preview.js';
import type { HoldStore } from '../holds/hold-store.js';
import { holdSubjectHashes } from '../holds/hold-store.js';
import { holdCovers } from '../holds/legal-hold.js';
import { eventAsProcessed, mayProcess } from '../read/processing-judge.js';
import {
  exportContext,
  type AccessPackageBody,
  type PackagedRecipient,
  type PackagedRecord,
  type Selector,
} from './access-request.js';

export interface AccessPackageDeps {
  events: EventStore;
  memories: MemoryStore;
  lineage: LineageStore;
  holds: HoldStore;
  disputes: DisputeStore;
  erasures: ErasureRequestStore;
  fingerprints: Fingerprinter;
  /** The tenants' keys of content hashes (what a selector by content digest is looked up under). */
  macs: TenantMacs;
  exposuresOfMany(
    tenant: string,
    memoryIds: readonly string[],
  ): Promise<{ memoryId: string; retrievalId: string; principal: string; retrievedAt: Date; exposedAt: Date | null }[]>;
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

function packagedEvent(e: EventRecord, reach: PackagedRecord['reach']): PackagedRecord {
  return {
    id: e._id,
    type: 'event',
    reach,
    namespace: e.namespace,
    subjects: e.subjects,
    content: e.content,
    purpose: null,
    sensitivity: e.sensitivity,
    retentionClass: null,
    expiresAt: null,
    source: e.source,
    provenance: null,
    status: e.deleted ? 'deleted' : 'recorded',
    validFrom: iso(e.occurredAt),
    validTo: null,
    recordedAt: e.recordedAt.toISOString(),
  };
}

function packagedMemory(m: MemoryRecord, reach: PackagedRecord['reach']): PackagedRecord {
  return {
    id: m._id,
    type: 'memory',
    reach,
    namespace: m.namespace,
    subjects: m.subjects,
    content: m.content,
    purpose: m.policy.purpose,
    sensitivity: m.policy.sensitivity,
    retentionClass: m.policy.retentionClass,
    expiresAt: iso(m.expiresAt),
    source: `written by ${m.writtenBy}`,
    provenance: {
      eventIds: m.provenance.eventIds,
      parentIds: m.provenance.parentIds,
      derivationRule: m.provenance.derivationRule,
    },
    status: m.status,
    validFrom: iso(m.validFrom),
    validTo: iso(m.validTo),
    recordedAt: m.recordedAt.toISOString(),
  };
}

function withheld(r: PackagedRecord): PackagedRecord {
  return {
    ...r,
    subjects: [],
    content: null,
    withheld: 'about-others',
    source: null,
    provenance: null,
  };
}

/** A record given in full names the requested subjects only, and counts the others. */
function givenTo(r: PackagedRecord, about: readonly string[]): PackagedRecord {
  const subjects = r.subjects.filter((s) => about.includes(s));
  const others = r.subjects.length - subjects.length;
  return { ...r, subjects, ...(others > 0 ? { otherSubjects: others } : {}) };
}

/**
 * `selectorReach`, and the located records read whole as they are located when the selector names a subject (the
 * common case): read once rather than once to locate and again for their content.
 */
async function reachAndRead(
  deps: AccessPackageDeps,
  tenant: string,
  selector: Selector,
): Promise<{
  locatedSet: Set<string>;
  wanted: string[];
  read: { ids: Set<string>; events: EventRecord[]; memories: MemoryRecord[] };
}> {
  if (!('subjectId' in selector)) {
    const { locatedSet, wanted } = await selectorReach(deps, tenant, selector);
    return { locatedSet, wanted, read: { ids: new Set(), events: [], memories: [] } };
  }
  const [events, memories] = await Promise.all([
    deps.events.allBySubject(tenant, selector.subjectId),
    deps.memories.allBySubject(tenant, selector.subjectId),
  ]);
  const located = [...new Set([...events.map((e) => e._id), ...memories.map((m) => m._id)])];
  const walk = await deps.lineage.closure(tenant, located);
  const locatedSet = new Set(located);
  return {
    locatedSet,
    wanted: [...new Set([...located, ...walk.derived])],
    read: { ids: locatedSet, events, memories },
  };
}

/**
 * What Lethe holds about the subjects the request answers for (`about`), as `locate` and the lineage closure reach
 * it (the records an erasure of the same selector would erase): every event and memory in every status with its
 * purpose, sensitivity, retention and provenance; disputes over them; that holds exist (counts only); earlier
 * erasures of the same selector with their certificates; and every principal that retrieved a record, with when it
 * reached a prompt. Nothing of records outside the closure. A reached record the processing judge does not let the
 * request export (about none of `about`: another person's data, Art. 15(4)) is listed by id, marked and counted,
 * without its content, subjects, source or provenance; a record given in full names no other subject.
 */
export async function buildAccessPackageBody(
  deps: AccessPackageDeps,
  input: { tenant: string; requestId: string; selector: Selector; about: readonly string[]; issuedAt: Date },
): Promise<{ body: AccessPackageBody; recordIds: string[] }> {
  const { tenant, selector, about } = input;
  const ctx = exportContext(tenant, about, input.issuedAt);
  const { locatedSet, wanted: all, read } = await reachAndRead(deps, tenant, selector);
  // Everything else read at once: the records the closure added, and what is known about them all by id.
  const wantedMemories = all.filter((id) => !isEvent(id));
  const unread = all.filter((id) => !read.ids.has(id));
  const [moreEvents, moreMemories, disputes, holds, erasures, exposures] = await Promise.all([
    deps.events.getMany(tenant, unread.filter(isEvent)),
    deps.memories.getMany(
      tenant,
      unread.filter((id) => !isEvent(id)),
    ),
    deps.disputes.allFor(tenant, wantedMemories),
    deps.holds.active(tenant),
    deps.erasures.withSelectorHash(tenant, deps.fingerprints.of('erasure-selector', tenant, canonicalJson(selector))),
    deps.exposuresOfMany(tenant, wantedMemories),
  ]);
  const events = [...read.events, ...moreEvents];
  const memories = [...read.memories, ...moreMemories];
  const reach = (id: string): PackagedRecord['reach'] => (locatedSet.has(id) ? 'located' : 'derived');
  const judged = [
    ...events.map((e) => ({ record: packagedEvent(e, reach(e._id)), asProcessed: eventAsProcessed(e) })),
    ...memories.map((m) => ({ record: packagedMemory(m, reach(m._id)), asProcessed: m })),
  ].map(({ record, asProcessed }) => ({ record, verdict: mayProcess('export', asProcessed, ctx) }));
  // Given in full: what the judge lets the request export, with the record's own subjects (holds match on them).
  const given = judged.filter((j) => j.verdict.allowed).map((j) => j.record);
  // Kept back: records about none of the subjects asked for; one of another tenant is never even listed.
  const kept = judged.filter((j) => !j.verdict.allowed && j.verdict.rule !== 'tenant').map((j) => withheld(j.record));
  const records = [...given.map((r) => givenTo(r, about)), ...kept].sort(
    (a, b) => a.recordedAt.localeCompare(b.recordedAt) || a.id.localeCompare(b.id),
  );
  // A memory erased between the closure and the read is not in the package, and neither is what is known of it.
  // Disputes and recipients name records and principals, never a subject: a withheld record's are listed too.
  const memoryIdSet = new Set(records.filter((r) => r.type === 'memory').map((r) => r.id));

  const subjectHashes = (subject: string) => holdSubjectHashes(deps.fingerprints, tenant, subject);
  // Holds match a record given in full on all its subjects, one withheld on its id and namespace only.
  const heldRecords = [...given, ...kept].filter((r) => holds.some((h) => holdCovers(h, r, subjectHashes)));
  const recipients: PackagedRecipient[] = exposures
    .filter((r) => memoryIdSet.has(r.memoryId))
    .map((r) => ({
      recordId: r.memoryId,
      principal: r.principal,
      retrievalId: r.retrievalId,
      retrievedAt: r.retrievedAt.toISOString(),
      promptAt: iso(r.exposedAt),
    }))
    .sort((a, b) => a.retrievedAt.localeCompare(b.retrievedAt) || a.recordId.localeCompare(b.recordId));

  const body: AccessPackageBody = {
    kind: 'lethe.access-package',
    version: 1,
    tenant,
    requestId: input.requestId,
    issuedAt: input.issuedAt.toISOString(),
    selectorKind: Object.keys(selector)[0]!,
    records,
    disputes: disputes
      .filter((d) => d.memoryIds.some((id) => memoryIdSet.has(id)))
      .map((d) => ({
        id: d._id,
        memoryId: d.memoryIds.find((id) => memoryIdSet.has(id)) ?? d.memoryIds[0]!,
        status: d.state,
        openedAt: d.openedAt.toISOString(),
        outcome: d.resolution?.outcome ?? null,
      }))
      .sort((a, b) => a.openedAt.localeCompare(b.openedAt) || a.id.localeCompare(b.id)),
    holds: {
      records: heldRecords.length,
      active: new Set(holds.filter((h) => heldRecords.some((r) => holdCovers(h, r, subjectHashes))).map((h) => h._id))
        .size,
    },
    erasures: erasures.map((e) => ({
      requestId: e._id,
      state: e.state,
      receivedAt: e.receivedAt.toISOString(),
      certificateIds: e.certificateIds,
    })),
    recipients,
    counts: {
      events: events.length,
      memories: memories.length,
      located: records.filter((r) => r.reach === 'located').length,
      derived: records.filter((r) => r.reach === 'derived').length,
      withheld: records.filter((r) => r.withheld !== undefined).length,
      disputes: disputes.filter((d) => d.memoryIds.some((id) => memoryIdSet.has(id))).length,
      recipients: new Set(recipients.map((r) => r.principal)).size,
      retrievals: recipients.length,
      prompts: recipients.filter((r) => r.promptAt !== null).length,
    },
  };
  return { body, recordIds: records.map((r) => r.id) };
}
