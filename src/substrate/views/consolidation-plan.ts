/**
 * Which views a consolidation run builds, pure, over the active memories of one namespace and one owner scope:
 * - a **view** (deduplication) of a subject's attribute that two or more records state alike: one record saying it
 *   once. Active records of one attribute agree, since differing ones are disputed, not kept side by side;
 * - a **summary** of a subject that two or more records say different things about: each distinct content once,
 *   oldest first, extractive (no sentence that no input said).
 * A view carries its whole input set as lineage and an idempotency key made of its shape, its inputs (id, version,
 * content hash), its rule, its model and its prompt version: a re-run over the same inputs finds the same key and
 * builds nothing.
 *
 * Views never amplify trust: the trust tier is the inputs' lowest, and so is the confidence, unless the inputs
 * agree from independent sources (`independentAgreement`). Views are not claims: they carry no attribute, so they
 * neither dispute nor supersede the facts they summarise.
 */
import { canonicalJson } from '../../shared/canonical-json.js';
import { sha256Hex } from '../../shared/sha256.js';
import type { MemoryRecord } from '../model/records.js';
import { normalisedContent } from './extractive-summariser.js';

export const CONSOLIDATION_RULE = 'consolidate-subject-attribute@1';
/** Inputs of one view at most (a memory cites at most 256 parents): a larger group is left whole, and counted. */
export const MAX_VIEW_INPUTS = 64;

export interface ViewGroup {
  /** The view's memory id, from its key. */
  id: string;
  key: string;
  kind: 'view' | 'summary';
  subjects: string[];
  inputs: MemoryRecord[];
  trustTier: number;
  confidence: number;
}

export type SkipReason = 'mixed-governance' | 'too-many-inputs' | 'no-common-valid-time';

/**
 * The shape of records a view groups: in the namespace, not themselves views. Whether a record may be consolidated
 * at all (status, scope, holds, restrictions, valid time, contest and stale marks) is the processing judge's
 * question (`mayProcess('consolidate', …)`), asked by the consolidation activity.
 */
export function groupable(record: MemoryRecord, namespace: string): boolean {
  return record.namespace === namespace && record.kind !== 'view' && record.kind !== 'summary';
}

/**
 * A view is valid only while all its inputs are: from the latest of their `validFrom` to the earliest of their
 * `validTo` (open when none ends). Null when the inputs were never valid at the same time.
 */
export function viewValidity(
  inputs: readonly Pick<MemoryRecord, 'validFrom' | 'validTo'>[],
): { validFrom: Date; validTo: Date | null } | null {
  const from = Math.max(...inputs.map((r) => r.validFrom.getTime()));
  const ends = inputs.flatMap((r) => (r.validTo ? [r.validTo.getTime()] : []));
  const to = ends.length > 0 ? Math.min(...ends) : null;
  if (to !== null && to <= from) return null;
  return { validFrom: new Date(from), validTo: to === null ? null : new Date(to) };
}

/**
 * Independent sources agree when the inputs all say the same thing and come from two or more writers whose cited
 * events are disjoint: the same value reached twice, not one source repeated. Then the view may keep the highest
 * confidence among them (never more than one of them had); otherwise the lowest.
 */
export function independentAgreement(
  inputs: readonly Pick<MemoryRecord, 'content' | 'writtenBy' | 'provenance'>[],
): boolean {
  if (inputs.length < 2) return false;
  const said = new Set(inputs.map((r) => normalisedContent(r.content)));
  if (said.size !== 1) return false;
  const writers = new Map<string, Set<string>>();
  for (const r of inputs) {
    const events = writers.get(r.writtenBy) ?? new Set<string>();
    for (const e of r.provenance.eventIds) events.add(e);
    writers.set(r.writtenBy, events);
  }
  if (writers.size < 2) return false;
  const seen = new Set<string>();
  for (const events of writers.values()) {
    for (const e of events) if (seen.has(e)) return false;
    for (const e of events) seen.add(e);
  }
  return true;
}

export function viewKey(
  tenant: string,
  kind: ViewGroup['kind'],
  inputs: readonly Pick<MemoryRecord, '_id' | 'version' | 'contentHash'>[],
  model: { modelVersion: string; promptVersion: string | null },
): string {
  return sha256Hex(
    canonicalJson({
      tenant,
      kind,
      rule: CONSOLIDATION_RULE,
      model: model.modelVersion,
      prompt: model.promptVersion,
      inputs: inputs.map((r) => [r._id, r.version, r.contentHash]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    }),
  );
}

const distinct = (inputs: readonly MemoryRecord[]) => new Set(inputs.map((r) => normalisedContent(r.content))).size;

export function planViews(
  tenant: string,
  records: readonly MemoryRecord[],
  model: { modelVersion: string; promptVersion: string | null },
): { groups: ViewGroup[]; skipped: Partial<Record<SkipReason, number>> } {
  const bySubjects = new Map<string, MemoryRecord[]>();
  const byAttribute = new Map<string, MemoryRecord[]>();
  for (const r of records) {
    const subjects = JSON.stringify([...r.subjects].sort());
    bySubjects.set(subjects, [...(bySubjects.get(subjects) ?? []), r]);
    if (typeof r.attribute === 'string') {
      const k = JSON.stringify([subjects, r.attribute]);
      byAttribute.set(k, [...(byAttribute.get(k) ?? []), r]);
    }
  }
  const candidates: { kind: ViewGroup['kind']; inputs: MemoryRecord[] }[] = [
    ...[...byAttribute.values()]
      .filter((inputs) => inputs.length >= 2 && distinct(inputs) === 1)
      .map((inputs) => ({ kind: 'view' as const, inputs })),
    ...[...bySubjects.values()]
      .filter((inputs) => distinct(inputs) >= 2)
      .map((inputs) => ({ kind: 'summary' as const, inputs })),
  ];
  const groups: ViewGroup[] = [];
  const skipped: Partial<Record<SkipReason, number>> = {};
  const skip = (reason: SkipReason) => (skipped[reason] = (skipped[reason] ?? 0) + 1);
  for (const { kind, inputs } of candidates) {
    if (inputs.length > MAX_VIEW_INPUTS) {
      skip('too-many-inputs');
      continue;
    }
    const governance = new Set(
      inputs.map((r) => JSON.stringify([r.policy.purpose, r.policy.sensitivity, r.policy.jurisdiction])),
    );
    if (governance.size > 1) {
      skip('mixed-governance');
      continue;
    }
    if (!viewValidity(inputs)) {
      skip('no-common-valid-time');
      continue;
    }
    const ordered = [...inputs].sort((a, b) => (a._id < b._id ? -1 : 1));
    const key = viewKey(tenant, kind, ordered, model);
    const confidences = ordered.map((r) => r.confidence);
    groups.push({
      id: `mem_view_${key.slice(0, 32)}`,
      key,
      kind,
      subjects: [...ordered[0]!.subjects].sort(),
      inputs: ordered,
      trustTier: Math.min(...ordered.map((r) => r.trustTier)),
      confidence: independentAgreement(ordered) ? Math.max(...confidences) : Math.min(...confidences),
    });
  }
  return { groups: groups.sort((a, b) => (a.id < b.id ? -1 : 1)), skipped };
}
