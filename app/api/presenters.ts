/**
 * The only way record content leaves the API. Each presenter takes the read judge's `Sight` and shows the record
 * as the verdict allows: the content view, or the content-free view (ids, hashes and counts: the auditor's).
 * Every object a presenter returns is registered, and a hook refuses any response that carries a `content` field
 * outside one (`guardPresentedContent`): a route that forgets the judge fails loudly instead of leaking.
 */
import type { FastifyInstance } from 'fastify';
import type { Sight } from '../../src/governance/read/read-judge.js';
import type { EventRecord, MemoryRecord } from '../../src/substrate/model/records.js';
import { derivationDisclosure } from '../../src/governance/derivation/disclosure.js';
import { decompose } from '../../src/governance/derivation/obligations.js';

const presented = new WeakSet<object>();

function issued<T extends object>(shown: T): T {
  presented.add(shown);
  return shown;
}

/** A record's content hash as shown: the keyed form only; a row not yet re-keyed holds the plain digest, not shown. */
function keyedHashOf(r: { contentHash: string; hashKeyId?: string }): { contentHash?: string } {
  return r.hashKeyId !== undefined ? { contentHash: r.contentHash } : {};
}

export function presentEvent(sight: Sight<EventRecord>) {
  const e = sight.record;
  const ids = {
    id: e._id,
    view: sight.view,
    namespace: e.namespace,
    ...keyedHashOf(e),
    sensitivity: e.sensitivity,
    trustTier: e.trustTier,
    occurredAt: e.occurredAt.toISOString(),
    recordedAt: e.recordedAt.toISOString(),
    correctionOf: e.correctionOf,
    ...((e.correctedBy?.length ?? 0) > 0 ? { correctedBy: e.correctedBy } : {}),
    ...(e.origin ? { origin: e.origin } : {}),
    ...restrictionOf(sight),
  };
  if (sight.view === 'content-free') return issued(ids);
  return issued({
    ...ids,
    source: e.source,
    externalId: e.externalId,
    subjects: e.subjects,
    content: e.content,
    scope: e.scope ?? null,
  });
}

/** A memory's governance without what it says or whom it is about: what every view shows. */
function memoryIds(m: MemoryRecord, view: Sight<MemoryRecord>['view']) {
  return {
    id: m._id,
    view,
    namespace: m.namespace,
    kind: m.kind,
    ...keyedHashOf(m),
    validFrom: m.validFrom.toISOString(),
    validTo: m.validTo?.toISOString() ?? null,
    recordedAt: m.recordedAt.toISOString(),
    provenance: { eventIds: m.provenance.eventIds, parentIds: m.provenance.parentIds },
    trustTier: m.trustTier,
    confidence: m.confidence,
    version: m.version,
    status: m.status,
    sensitivity: m.policy.sensitivity,
    scope: m.scope ?? null,
    // Under correction, or built from a value since corrected: never served as current, and said so where shown.
    ...((m.contestedBy?.length ?? 0) > 0 ? { contestedBy: m.contestedBy } : {}),
    ...(m.stale ? { stale: { because: m.stale.because, since: m.stale.since.toISOString() } } : {}),
    // Descends from external or lowest-trust content; held for a reviewer before any agent read it.
    ...((m.taint?.length ?? 0) > 0 ? { taint: m.taint } : {}),
    ...((m.quarantinedFor?.length ?? 0) > 0 ? { quarantinedFor: m.quarantinedFor } : {}),
  };
}

/** A duty read is told that the record's subject restricted processing or objected to purposes: never whom. */
function restrictionOf(sight: Sight<unknown>) {
  return sight.restriction ? { restriction: sight.restriction } : {};
}

/** `extra`: route-specific numbers (a score, a token count, dispute ids) shown beside the record. */
export function presentMemory(sight: Sight<MemoryRecord>, extra: Record<string, unknown> = {}) {
  const m = sight.record;
  if (sight.view === 'content-free') return issued({ ...memoryIds(m, sight.view), ...restrictionOf(sight), ...extra });
  const disclosure = derivationDisclosure(m.derivation, m.qualifierDrift);
  return issued({
    ...memoryIds(m, sight.view),
    subjects: m.subjects,
    attribute: m.attribute,
    content: m.content,
    policy: m.policy,
    provenance: m.provenance,
    // Repaired, signed off over an audit that was not supported, or a correction that dropped qualifiers: the
    // reader is told so (a flag and counts).
    ...(disclosure ? { derivationAudit: disclosure } : {}),
    ...restrictionOf(sight),
    ...extra,
  });
}

/**
 * A record as a reviewer decides on it: evidence ids, the writer, the policy's reason and the derivation audit;
 * with the content view, also the content and the claim each obligation is about (recomputed from the content).
 */
export function presentReviewRecord(sight: Sight<MemoryRecord>) {
  const m = sight.record;
  const content = sight.view === 'content';
  const d = m.derivation;
  // Places kept at admission are read as they are; a record admitted before they were kept is decomposed again.
  const stored = !d || d.obligations.every((o) => o.span || o.of || o.between);
  const wording = content && d && !stored ? new Map(decompose(m.content).map((o) => [o.id, o])) : undefined;
  return issued({
    id: m._id,
    view: sight.view,
    kind: m.kind,
    namespace: m.namespace,
    status: m.status,
    validFrom: m.validFrom.toISOString(),
    validTo: m.validTo?.toISOString() ?? null,
    trustTier: m.trustTier,
    confidence: m.confidence,
    policyReason: m.statusReason,
    evidence: {
      eventIds: m.provenance.eventIds,
      parentIds: m.provenance.parentIds,
      derivationRule: m.provenance.derivationRule,
    },
    writtenBy: m.writtenBy,
    ...(content ? { content: m.content } : {}),
    ...(d
      ? {
          derivation: {
            label: d.label,
            citationOnly: d.citationOnly,
            expanded: d.expanded,
            verifier: d.verifier,
            mode: d.mode,
            policy: d.policy,
            counts: d.counts,
            repairedEvidenceIds: d.repairedEvidenceIds,
            evidenceIds: d.evidenceIds,
            ...(d.unresolvedBecause ? { unresolvedBecause: d.unresolvedBecause } : {}),
            obligations: d.obligations.map(({ span, ...o }) => {
              const w = wording?.get(o.id);
              if (stored) return content && span ? { ...o, text: m.content.slice(span[0], span[1]) } : o;
              return {
                ...o,
                ...(w?.kind === 'claim'
                  ? { text: w.text }
                  : w && w.kind !== 'relation'
                    ? { of: w.claim }
                    : w
                      ? { between: w.between }
                      : {}),
              };
            }),
          },
        }
      : {}),
  });
}

/**
 * An access package (Art. 15, 20): a signed document of a data subject's whole closure, built by the worker for the
 * DPO under the read policy's `access-request` purpose, downloaded as the subject-access policy allows. It is shown
 * whole or not at all: the API cannot redact a signed document without breaking its signature.
 */
export function presentAccessPackage<T extends { records: object[] }>(pkg: T): T {
  for (const record of pkg.records) issued(record);
  return issued(pkg);
}

/** Fields that carry what a record says or was derived from; they leave the API only inside a presented record. */
const CONTENT_FIELDS = ['content'] as const;

/** The path of the first content field found outside a presented record, or null. */
export function unpresentedContent(payload: unknown, path = '$', depth = 0): string | null {
  if (payload === null || typeof payload !== 'object' || depth > 32) return null;
  if (presented.has(payload)) return null;
  if (Array.isArray(payload)) {
    for (const [i, item] of payload.entries()) {
      const found = unpresentedContent(item, `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const field of CONTENT_FIELDS) if (Object.hasOwn(payload, field)) return `${path}.${field}`;
  for (const [key, value] of Object.entries(payload)) {
    const found = unpresentedContent(value, `${path}.${key}`, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * Refuses (500, logged with the route and the field's path, never its value) any tenant route's response that
 * carries content no presenter issued.
 */
export function guardPresentedContent(app: FastifyInstance): void {
  app.addHook('preSerialization', async (request, _reply, payload) => {
    if (!request.routeOptions.config.action) return payload;
    const at = unpresentedContent(payload);
    if (at) {
      request.log.error({ route: request.routeOptions.url, at }, 'content left a route without the read judge');
      throw new Error('content without a verdict');
    }
    return payload;
  });
}

/**
 * The corrected content an open rectification proposes: the filing DPO's words about the record's subject, shown to
 * the reviewer who decides it (and the DPO), as the subject-rectification policy allows; every read is audited.
 */
export function presentRectificationProposal<T extends { content: string }>(proposal: T): T {
  return issued(proposal);
}
