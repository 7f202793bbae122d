/**
 * A data subject's access and portability request (GDPR Art. 15, 20): the DPO files it for a selector, a durable
 * workflow builds a signed, machine-readable package of what Lethe holds about the subject, and the DPO downloads it
 * within a delivery window, after which the package is erased. The stored request keeps the selector's keyed hash
 * (the clear selector is sealed beside it and shredded with the package). Pure code.
 */
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { plainString } from '../../shared/plain-text.js';
import type { CertificateSigner } from '../certificates/signing.js';
import { signDocument, verifyDocument, type Signed } from '../certificates/signed-document.js';
import { SelectorSchema, type Selector } from '../erasure/erasure-request.js';
import type { ProcessingContext } from '../read/processing-judge.js';
import { NO_RESTRICTIONS } from './restriction.js';

/** The data subject a request answers; a subject selector names its own, and another may not be named beside it. */
const answeredSubject = plainString(256).optional();

function sameSubject(v: { selector: Selector; subjectId?: string | undefined }, ctx: z.RefinementCtx): void {
  if (v.subjectId !== undefined && 'subjectId' in v.selector && v.selector.subjectId !== v.subjectId)
    ctx.addIssue({ code: 'custom', path: ['subjectId'], message: 'must be the subject the selector names' });
}

export const AccessFilingSchema = z
  .strictObject({
    selector: SelectorSchema,
    /**
     * The data subject the request answers. A subject selector names it; for the other kinds (ids, time ranges, a
     * fingerprint) the package gives in full only the records about this subject, and without it none.
     */
    subjectId: answeredSubject,
    /** The client's idempotency key: filing again with it returns the same request. */
    requestKey: plainString(128),
  })
  .superRefine(sameSubject);
export type AccessFiling = z.output<typeof AccessFilingSchema>;

/** A selector and the subject it is filed for, as a preview or a request takes them. */
export const SelectorForSubjectSchema = z
  .strictObject({ selector: SelectorSchema, subjectId: answeredSubject })
  .superRefine(sameSubject);

/**
 * The data subjects a request answers for, and whose records it may give (Art. 15(4)): the subject a subject
 * selector names, or the one filed beside another kind of selector; none otherwise.
 */
export function subjectsAnswered(selector: Selector, subjectId?: string | null): string[] {
  if ('subjectId' in selector) return [selector.subjectId];
  return subjectId ? [subjectId] : [];
}

/**
 * What the processing judge is asked when a request exports records about `about`: the DPO answers for the whole
 * tenant (a duty), so of the judge's rules only the tenant and the subject bind the act.
 */
export function exportContext(tenant: string, about: readonly string[], now: Date): ProcessingContext {
  return { tenant, scopes: 'all', purposes: 'any', restrictions: NO_RESTRICTIONS, now, about };
}

export const ACCESS_STATES = ['received', 'building', 'ready', 'expired', 'failed'] as const;
export type AccessState = (typeof ACCESS_STATES)[number];

export interface AccessRequest {
  _id: string;
  tenant: string;
  selectorKind: string;
  selectorHash: string;
  requester: string;
  receivedAt: Date;
  /** One month from receipt (Art. 12(3)). */
  dueAt: Date;
  state: AccessState;
  /** What the package holds, by kind: counts only. */
  counts: Record<string, number>;
  /** SHA-256 of the package's canonical body, as signed. */
  packageHash: string | null;
  readyAt: Date | null;
  /** When the package is erased, whether or not it was downloaded. */
  expiresAt: Date | null;
  downloads: number;
  updatedAt: Date;
}

/** A request as filed: received now, due one month later (Art. 12(3)), nothing built yet. */
export function receivedAccessRequest(
  filed: Pick<AccessRequest, '_id' | 'tenant' | 'selectorKind' | 'selectorHash' | 'requester'>,
  receivedAt: Date,
): AccessRequest {
  const dueAt = new Date(receivedAt);
  dueAt.setUTCMonth(dueAt.getUTCMonth() + 1);
  return {
    ...filed,
    receivedAt,
    dueAt,
    state: 'received',
    counts: {},
    packageHash: null,
    readyAt: null,
    expiresAt: null,
    downloads: 0,
    updatedAt: receivedAt,
  };
}

/** Why a packaged record is held, for how long, and where it came from. */
export interface PackagedRecord {
  id: string;
  type: 'event' | 'memory';
  /** `located` (named by the selector) or `derived` (reached by lineage from a located record). */
  reach: 'located' | 'derived';
  namespace: string;
  /** The requested subjects among the record's: another subject's id is never named (see `otherSubjects`). */
  subjects: string[];
  /** How many other data subjects the record is also about, when any: counted, never named. */
  otherSubjects?: number;
  /** Null when withheld: a record about none of the subjects the request answers for (see `withheld`). */
  content: string | null;
  /**
   * Why the record is listed without its content or subjects: the selector or the lineage closure reached it, but it
   * is about none of the subjects the request answers for (another person's data, Art. 15(4)). The DPO decides
   * whether to release it.
   */
  withheld?: 'about-others';
  purpose: string | null;
  sensitivity: string | null;
  retentionClass: string | null;
  expiresAt: string | null;
  source: string | null;
  provenance: { eventIds: string[]; parentIds: string[]; derivationRule: string } | null;
  status: string | null;
  validFrom: string | null;
  validTo: string | null;
  recordedAt: string;
}

/** One principal's read of one record, and whether it reached a prompt (Art. 15(1)(c)). */
export interface PackagedRecipient {
  recordId: string;
  principal: string;
  retrievalId: string;
  retrievedAt: string;
  promptAt: string | null;
}

export interface AccessPackageBody {
  kind: 'lethe.access-package';
  version: 1;
  tenant: string;
  requestId: string;
  issuedAt: string;
  selectorKind: string;
  records: PackagedRecord[];
  disputes: { id: string; memoryId: string; status: string; openedAt: string; outcome: string | null }[];
  /** That a legal hold keeps some of the records, and how many: never the case. */
  holds: { records: number; active: number };
  /** Earlier erasures of the same selector, with their certificates. */
  erasures: { requestId: string; state: string; receivedAt: string; certificateIds: string[] }[];
  recipients: PackagedRecipient[];
  counts: Record<string, number>;
}

export type AccessPackage = Signed<AccessPackageBody>;

export function signAccessPackage(body: AccessPackageBody, signer: CertificateSigner): AccessPackage {
  return signDocument(body, signer);
}

export type AccessPackageVerification = { ok: true; keyId: string; records: number } | { ok: false; reason: string };

export function isAccessPackage(value: unknown): value is AccessPackage {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'lethe.access-package';
}

/**
 * Offline: the package's body hashes to what its signature names, and the signature verifies under one of the keys.
 * Any edit of the body (a record added, dropped or changed) fails.
 */
export function verifyAccessPackage(value: unknown, publicKeys: readonly KeyObject[]): AccessPackageVerification {
  if (!isAccessPackage(value)) return { ok: false, reason: 'not an access package (kind lethe.access-package)' };
  const verdict = verifyDocument(value, publicKeys, 'package');
  if (!verdict.ok) return verdict;
  return { ok: true, keyId: verdict.keyId, records: Array.isArray(value.records) ? value.records.length : 0 };
}

export type { Selector };
