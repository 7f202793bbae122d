import type { MemoryStatus } from '../../shared/lifecycle.js';

export const SENSITIVITIES = ['public', 'internal', 'confidential', 'special'] as const;
export type Sensitivity = (typeof SENSITIVITIES)[number];

/** Content above this size is refused: memories are facts and summaries, not documents. */
export const MAX_CONTENT_BYTES = 32 * 1024;

export const MEMORY_KINDS = ['fact', 'preference', 'summary', 'relation', 'view', 'note'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/**
 * Where an event's content came from. `interaction` is what the agent and the person said to each other; the others
 * are external content (a tool's output, a fetched document, a connector's import), which can carry text written to
 * steer an agent: a memory derived from it waits in quarantine for a reviewer (see `ingestion/input-trust.ts`).
 */
export const EVENT_ORIGINS = ['interaction', 'tool-output', 'fetched-document', 'connector'] as const;
export type EventOrigin = (typeof EVENT_ORIGINS)[number];

/**
 * Why a memory is tainted: it descends from external content, or from a source of the lowest trust tier. A taint
 * passes to every record derived from a tainted one and is never lifted, not even by a reviewer's promotion.
 */
export const TAINT_REASONS = ['external-content', 'low-trust'] as const;
export type TaintReason = (typeof TAINT_REASONS)[number];

/** An immutable record of something an agent saw; a correction is a new event pointing to the old one. */
export interface EventRecord {
  _id: string;
  tenant: string;
  namespace: string;
  source: string;
  externalId: string;
  /** The content's keyed hash (`content-hash.ts`): the plain SHA-256 on a row written before keying. */
  contentHash: string;
  /**
   * SHA-256 of source + external id + the content's SHA-256, keyed like `contentHash`: unique per tenant. The event's
   * id is derived from the plain key (`eventIdOf`), so keying the stored one changed no id.
   */
  idempotencyKey: string;
  /** The key `contentHash` and `idempotencyKey` were made under; absent: both plain, written before keying. */
  hashKeyId?: string;
  subjects: string[];
  content: string;
  sensitivity: Sensitivity;
  trustTier: number;
  occurredAt: Date;
  recordedAt: Date;
  correctionOf: string | null;
  recordedBy: string;
  /** The staged batch whose admission recorded it: a refused retry of that stage takes back exactly these. */
  stageId?: string;
  /** External content's origin; absent for an interaction (and on events written before origins were kept). */
  origin?: Exclude<EventOrigin, 'interaction'>;
  deleted: boolean;
  /** Legal holds restricting this event to the legal role (absent when none). */
  restrictedBy?: string[];
  /**
   * Rectifications (Art. 16) that found a value derived from this event inaccurate: the event is what was said, and
   * stays, but it is no longer evidence for that value. Absent or empty: none.
   */
  correctedBy?: string[];
  /**
   * Whose event it is: `principal:<writer>` (the default) or `tenant` (shared). Absent on events written before
   * events had scopes: every read treats that as unknown, never as readable.
   */
  scope?: string;
}

export interface PolicyAttributes {
  purpose: string;
  sensitivity: Sensitivity;
  jurisdiction: string;
  retentionClass: string;
}

export interface Provenance {
  eventIds: string[];
  parentIds: string[];
  derivationRule: string;
  modelVersion: string | null;
  promptVersion: string | null;
  /**
   * Earlier events the derivation audit found to support the memory beyond its citations (provenance-repaired);
   * registered as lineage inputs, so that erasing one reaches the memory. Absent when there were none.
   */
  repairedEventIds?: string[];
}

/** Where an obligation is in its memory: a claim's [start, end) in the content, a qualifier's claim, a relation's two claims. */
export interface ObligationPlace {
  span?: [number, number];
  of?: string;
  between?: [string, string];
}

/**
 * What the write-time derivation audit concluded (governance/derivation): ids, labels and counts, never text.
 * Each obligation keeps its place in the memory (a claim's span in the content, a qualifier's claim, a relation's
 * two claims), so that a reviewer reads its wording from the content; records admitted before places were kept
 * have them recomputed when read.
 */
export interface DerivationAuditRecord {
  verifier: { id: string; version: string };
  label: string;
  citationOnly: string;
  expanded: string;
  obligations: ({
    id: string;
    kind: string;
    relation?: string;
    label: string;
    evidenceIds: string[];
  } & ObligationPlace)[];
  repairedEvidenceIds: string[];
  evidenceIds: string[];
  counts: { cited: number; retrieved: number; leftOut: number; obligations: number };
  unresolvedBecause?: string;
  /** `record`: the verdict was kept but did not decide admission. */
  mode: 'enforce' | 'record';
  policy: { id: string; version: number; rule: string; outcome: string };
}

/** A memory with the governance it carries from the moment it is written (invariant 2). */
export interface MemoryRecord {
  _id: string;
  tenant: string;
  namespace: string;
  subjects: string[];
  kind: MemoryKind;
  /** What the memory is about for a subject (e.g. "employer"); contradictions compare these. */
  attribute: string | null;
  content: string;
  /** The content's keyed hash (`content-hash.ts`): the plain SHA-256 on a row written before keying. */
  contentHash: string;
  /** The key `contentHash` was made under; absent: plain, written before keying. */
  hashKeyId?: string;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  policy: PolicyAttributes;
  provenance: Provenance;
  trustTier: number;
  confidence: number;
  version: number;
  status: MemoryStatus;
  writtenBy: string;
  /** Set by retention policy at admission. */
  expiresAt: Date | null;
  /** The record's slot in the retention queue (see governance/retention/expiry-bucket.ts). */
  expiryBucket?: string | null;
  highImpact: boolean;
  statusReason: string | null;
  updatedAt: Date;
  /** Legal holds restricting this record to the legal role (absent when none). */
  restrictedBy?: string[];
  /** Its taints, inherited from its inputs (absent when none). */
  taint?: TaintReason[];
  /**
   * Why it was admitted into quarantine (a candidate no agent reads until a reviewer promotes it), as reason codes:
   * `external-content:<origin>`, `instruction-like:<kind>`. Kept after promotion, as the record's history.
   */
  quarantinedFor?: string[];
  /** The derivation audit at admission (absent on records written before it existed). */
  derivation?: DerivationAuditRecord;
  /**
   * The staged batch whose admission wrote it (absent on records written otherwise, or before it was kept): the
   * admission's own later reads of the batch find its records in one indexed query instead of a lookup each.
   */
  stageId?: string;
  /**
   * Set when this record superseded an earlier one without carrying its qualifiers forward: the earlier record's
   * id and the kinds of qualifier dropped (time, negation, uncertainty, quantity).
   */
  qualifierDrift?: { from: string; dropped: string[] };
  /**
   * Rectification requests (Art. 16) open over this record: its accuracy is contested, so from filing it is not
   * served as current (Art. 18(1)(a)) until a reviewer decides. Absent or empty: none.
   */
  contestedBy?: string[];
  /**
   * Set on a record derived from one that was rectified: it was built from a value since corrected, so it is not
   * served as current until it is derived again (or erased). Which rectification, and when.
   */
  stale?: { because: string; since: Date };
  /**
   * Whose memory it is: `principal:<writer>` (the default) or `tenant` (shared). Absent on records written
   * before scopes existed: retrieval treats that as unknown, never as readable.
   */
  scope?: string;
}

/** Owner scopes: a principal's own (`principal:<id>`) or the tenant's shared one (`tenant`). */
export const SCOPE_PATTERN = /^(?:tenant|principal:\S{1,256})$/;

export function isScope(value: string): boolean {
  return SCOPE_PATTERN.test(value);
}

export function principalScope(principalId: string): string {
  return `principal:${principalId}`;
}
