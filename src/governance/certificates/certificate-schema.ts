/**
 * What a certificate may contain, checked at issue time and again by the offline verifier. The rules keep personal
 * data out (every string is an opaque id, a hash, a code, a timestamp or a short statement without `@`) and keep
 * the certificate consistent with itself (counts add up; a `complete` certificate exempts nothing and its probes
 * found nothing).
 */
import { z } from 'zod';
import { parseOrThrow } from '../../shared/validation.js';
import { TENANT_PATTERN } from '../auth/principal.js';
import {
  CERTIFICATE_FORMAT,
  type CertificateBody,
  type CertificateInput,
  type DeletionCertificate,
} from './certificate.js';

/** Opaque ids (records, requests, holds, certificates, policies, collections, indices): no `@`, no spaces. */
export const OPAQUE_ID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,255}$/;
/** A principal id may be a login, so `@` is allowed there; it names staff acting, never the data subject. */
const PRINCIPAL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,255}$/;
/** Codes: legal grounds, step names, places, count names, actions. */
const CODE = /^[A-Za-z0-9][A-Za-z0-9 ()+.,:/_-]{0,127}$/;
/** Engine-written statements: printable, no `@` (so no e-mail addresses), bounded. */
const STATEMENT = /^[^@\p{Cc}]{1,500}$/u;
/** Exactly the form `Date.toISOString()` produces, so instants compare as strings. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HEX64 = /^[0-9a-f]{64}$/;
/** A keyed hash, hex, optionally tagged with its algorithm (`hmac-sha256:…`). */
const KEYED_HASH = /^(?:[a-z0-9-]{1,32}:)?[0-9a-f]{32,128}$/;

const opaqueId = z
  .string()
  .regex(OPAQUE_ID, 'must be an opaque id (letters, digits, ".", "_", ":", "/", "-"; no personal data)');
const code = z.string().regex(CODE, 'must be a short code (letters, digits, spaces and ()+.,:/_-)');
const statement = z.string().regex(STATEMENT, 'must be 1–500 printable characters without "@"');
const instant = z
  .string()
  .regex(INSTANT, 'must be an ISO 8601 UTC instant like 2025-01-31T12:00:00.000Z')
  .refine((s) => !Number.isNaN(Date.parse(s)) && new Date(s).toISOString() === s, 'must be a real date');
const count = z.int().min(0);
const uniqueIds = (max: number) =>
  z
    .array(opaqueId)
    .max(max)
    .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an id');

const policy = z.strictObject({ policyId: opaqueId, policyVersion: count, outcome: code, ruleId: opaqueId });
const hold = z.strictObject({ holdId: opaqueId, exemptedCount: count, exemptedIds: uniqueIds(1_000_000) });
const closure = z.strictObject({
  located: count,
  derived: count,
  collateral: count,
  total: count,
  ids: uniqueIds(1_000_000),
});
const store = z.discriminatedUnion('store', [
  z.strictObject({
    store: z.literal('mongodb'),
    collection: opaqueId,
    action: code,
    deleted: count,
    compacted: z.boolean(),
  }),
  z.strictObject({
    store: z.literal('elasticsearch'),
    index: opaqueId,
    action: code,
    deleted: count,
    deletedDocsAfter: count,
  }),
  z.strictObject({ store: z.literal('cache'), name: opaqueId, action: code, deleted: count }),
]);
const probe = z.strictObject({
  kind: z.enum(['id', 'text', 'vector', 'content-hash', 'subject', 'locate', 'data-key']),
  target: z.enum(['api', 'mongodb', 'elasticsearch']),
  indices: uniqueIds(100).optional(),
  checked: count,
  sentences: count.optional(),
  served: count.optional(),
  searched: count.optional(),
  found: count,
  outside: count.optional(),
});
const finding = z.strictObject({
  id: opaqueId,
  kind: z.enum(['memory', 'event']),
  probes: z.array(code).min(1).max(16),
  resolution: z.enum(['extended', 'stated']),
});
const step = z.strictObject({
  step: code,
  startedAt: instant,
  finishedAt: instant,
  counts: z.record(z.string().regex(CODE, 'count names must be short codes'), count),
});
const lapse = z.union([z.strictObject({ at: instant }), z.strictObject({ condition: statement })]);
const assurance = z.strictObject({
  place: code,
  level: z.enum(['L1', 'L2', 'L3']),
  statement,
  lapses: lapse.optional(),
});

const exposure = z.strictObject({
  retrievals: count,
  byRoute: z.partialRecord(z.enum(['retrieve', 'search', 'memory', 'event']), count).optional(),
  prompts: count,
  firstRetrievedAt: instant.optional(),
  lastRetrievedAt: instant.optional(),
  firstExposedAt: instant.optional(),
  lastExposedAt: instant.optional(),
});

const stated = {
  tenant: z.string().regex(TENANT_PATTERN, 'must match ^[a-z0-9][a-z0-9-]{1,62}$'),
  requestId: opaqueId,
  selectorHash: z.string().regex(KEYED_HASH, 'must be a keyed hash in hex (optionally "alg:hex")'),
  requester: z.string().regex(PRINCIPAL_ID, 'must be a principal id'),
  legalGround: code,
  policy,
  holds: z.array(hold).max(10_000),
  status: z.enum(['complete', 'partial']),
  closure,
  stores: z.array(store).max(10_000),
  probes: z.array(probe).max(1_000),
  steps: z.array(step).max(1_000),
  assurance: z.array(assurance).max(1_000),
  exposure: exposure.optional(),
  findings: z.array(finding).max(100_000).optional(),
};

type Stated = Omit<CertificateInput, 'certificateId'>;

/** The rules that tie the fields together. */
function checkConsistency(c: Stated, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const { closure: k } = c;
  if (k.total !== k.located + k.derived) issue(['closure', 'total'], 'must equal located + derived');
  if (k.ids.length !== k.total) issue(['closure', 'ids'], 'must hold exactly total ids');
  if (k.collateral > k.derived) issue(['closure', 'collateral'], 'must not exceed derived');
  const holdIds = new Set<string>();
  c.holds.forEach((h, i) => {
    if (h.exemptedIds.length !== h.exemptedCount)
      issue(['holds', i, 'exemptedIds'], 'must hold exactly exemptedCount ids');
    if (holdIds.has(h.holdId)) issue(['holds', i, 'holdId'], 'must not repeat a hold');
    holdIds.add(h.holdId);
  });
  c.steps.forEach((s, i) => {
    if (s.finishedAt < s.startedAt) issue(['steps', i, 'finishedAt'], 'must not be before startedAt');
  });
  if (c.exposure) {
    const e = c.exposure;
    if (e.prompts > 0 && e.retrievals === 0) issue(['exposure', 'prompts'], 'a prompt needs a retrieval');
    if (e.byRoute && Object.values(e.byRoute).reduce((n, c) => n + c, 0) !== e.retrievals)
      issue(['exposure', 'byRoute'], 'must add up to retrievals');
    if (e.retrievals > 0 !== (e.firstRetrievedAt !== undefined && e.lastRetrievedAt !== undefined))
      issue(['exposure', 'firstRetrievedAt'], 'times are given exactly when there were retrievals');
    if (e.prompts > 0 !== (e.firstExposedAt !== undefined && e.lastExposedAt !== undefined))
      issue(['exposure', 'firstExposedAt'], 'times are given exactly when there were prompts');
    if (e.firstRetrievedAt && e.lastRetrievedAt && e.lastRetrievedAt < e.firstRetrievedAt)
      issue(['exposure', 'lastRetrievedAt'], 'must not be before firstRetrievedAt');
    if (e.firstExposedAt && e.lastExposedAt && e.lastExposedAt < e.firstExposedAt)
      issue(['exposure', 'lastExposedAt'], 'must not be before firstExposedAt');
  }
  const inClosure = new Set(k.ids);
  const findingIds = new Set<string>();
  (c.findings ?? []).forEach((f, i) => {
    if (findingIds.has(f.id)) issue(['findings', i, 'id'], 'must not repeat a finding');
    findingIds.add(f.id);
    if (f.resolution === 'extended' && !inClosure.has(f.id))
      issue(['findings', i, 'id'], 'an extended finding must be in the closure');
    if (f.resolution === 'stated' && inClosure.has(f.id))
      issue(['findings', i, 'id'], 'a stated finding was not erased, so it is not in the closure');
  });
  c.probes.forEach((p, i) => {
    if (p.sentences !== undefined && p.checked > p.sentences)
      issue(['probes', i, 'checked'], 'must not exceed the sentences there were to probe');
    if (p.searched !== undefined && p.searched > p.checked)
      issue(['probes', i, 'searched'], 'must not exceed the sentences checked');
    if ((p.served !== undefined || p.searched !== undefined) && !(p.kind === 'text' && p.target === 'api'))
      issue(['probes', i, 'served'], 'is stated only by the text probe of the governed search');
  });
  c.assurance.forEach((a, i) => {
    if (a.level === 'L3' && !a.lapses)
      issue(['assurance', i, 'lapses'], 'is required at L3 (the date or condition on which it lapses)');
  });
  if (c.status === 'complete') {
    // A complete certificate claims that nothing was kept and nothing is left: the body must not say otherwise.
    c.holds.forEach((h, i) => {
      if (h.exemptedCount > 0)
        issue(['holds', i, 'exemptedCount'], 'must be 0 in a complete certificate (else status is partial)');
    });
    const stated = (c.findings ?? []).filter((f) => f.resolution === 'stated').length;
    c.probes.forEach((p, i) => {
      if (p.found > 0) issue(['probes', i, 'found'], 'must be 0 in a complete certificate');
      // A copy reached outside the closure is either stated as a finding or the certificate is not complete.
      if ((p.outside ?? 0) > stated)
        issue(['probes', i, 'outside'], 'must not exceed the stated findings in a complete certificate');
    });
    c.stores.forEach((s, i) => {
      if (s.store === 'elasticsearch' && s.deletedDocsAfter > 0) {
        issue(['stores', i, 'deletedDocsAfter'], 'must be 0 in a complete certificate');
      }
    });
  }
}

/** What a caller may ask to be certified. */
export const CertificateInputSchema = z
  .strictObject({ ...stated, certificateId: opaqueId.optional() })
  .superRefine((c, ctx) => checkConsistency(c, ctx));

/** A sealed certificate as exported. */
export const DeletionCertificateSchema = z
  .strictObject({
    ...stated,
    format: z.literal(CERTIFICATE_FORMAT),
    certificateId: opaqueId,
    seq: z.int().min(1),
    issuedAt: instant,
    previousCertificateHash: z.string().regex(HEX64, 'must be 64 lower-case hex digits'),
    hash: z.string().regex(HEX64, 'must be 64 lower-case hex digits'),
    signature: z.string().min(1),
    keyId: z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 lower-case hex digits'),
  })
  .superRefine((c, ctx) => checkConsistency(c, ctx));

/** Validates what a caller asks to certify; a ValidationError names the first bad field. */
export function parseCertificateInput(input: unknown): CertificateInput {
  const parsed = parseOrThrow(CertificateInputSchema, input);
  // Optional fields given as `undefined` have no canonical JSON form: drop them (the schema admits only JSON).
  return JSON.parse(JSON.stringify(parsed)) as CertificateInput;
}

/** Why a value is not a well-formed certificate (`path: problem`), or null when it is one. */
export function describeInvalidCertificate(value: unknown): string | null {
  const result = DeletionCertificateSchema.safeParse(value);
  if (result.success) return null;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String).join('.') || '$';
  if (issue.code === 'unrecognized_keys')
    return `${path === '$' ? '' : `${path}.`}${issue.keys[0] ?? ''}: unknown field`;
  return `${path}: ${issue.message}`;
}

// The schemas and the types must describe the same thing.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _bodyMatches: Same<
  Omit<z.output<typeof DeletionCertificateSchema>, 'hash' | 'signature' | 'keyId'>,
  CertificateBody
> = true;
const _certificateMatches: Same<z.output<typeof DeletionCertificateSchema>, DeletionCertificate> = true;
