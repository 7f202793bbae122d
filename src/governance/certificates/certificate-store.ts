/**
 * Deletion certificates on MongoDB (FerretDB locally), without transactions.
 *
 * Chain: like the audit log, each certificate's `_id` is `<tenant>:<seq, zero-padded>`, so the primary key forbids
 * two certificates at one seq. An issuer reads the head, seals `head.seq + 1` over `head.hash` and inserts; losing a
 * race is an E11000, after which it reads the new head and seals again — the chain has no gaps and no forks.
 *
 * Idempotency: a unique (tenant, requestId, status) index means one `complete` (and one `partial`) certificate per
 * request; issuing again — a retried activity, a concurrent duplicate — returns the certificate already written.
 *
 * Anchoring: after the insert, the certificate is appended to the audit chain under the idempotency key
 * `certificate:<certificateId>` and the document is marked anchored. A crash between insert and anchor leaves an
 * unmarked document; the retried issue finds it and anchors it (once — the key dedupes), and any later issue for the
 * tenant anchors an unmarked head before building on it, so a certificate is never left unanchored for long.
 *
 * Log anchor: with `logAnchors`, the anchoring also signs (or finds) a checkpoint of the tenant's audit tree covering
 * the entry and keeps the entry's inclusion proof in it beside the certificate, so one certificate is verified with
 * the log key alone. A retry that finds the entry written but no log anchor kept appends again (the key returns the
 * entry already written: never a second entry) and proves it under the checkpoint then latest.
 */
import type { Collection, Db } from 'mongodb';
import { Collections, isDuplicateKey, mapBounded } from '../../substrate/mongo/collections.js';
import { chainLinkId, findChainHead } from '../../substrate/mongo/hash-chain.js';
import { DomainError, ErrorType, validationError } from '../../shared/errors.js';
import { TENANT_PATTERN } from '../auth/principal.js';
import type { AuditLog } from '../audit/audit-log.port.js';
import type { LogAnchor } from '../audit/log-tree/log-anchor.js';
import type { LogAnchors } from '../audit/log-tree/log-anchors.js';
import { anchoredCertificate, type AnchoredCertificate } from './anchored-certificate.js';
import {
  certificateAnchor,
  chainCertificate,
  defaultCertificateId,
  nextLink,
  type CertificateInput,
  type DeletionCertificate,
} from './certificate.js';
import { parseCertificateInput } from './certificate-schema.js';
import type { CertificateSigner } from './signing.js';

/** An issuance period, inclusive at both ends, over `issuedAt`. */
export interface CertificatePeriod {
  from?: Date;
  to?: Date;
}

/** Where a certificate is anchored in the audit chain. */
export interface CertificateAnchorRef {
  auditSeq: number;
  auditHash: string;
}

/** The tenant's signed, hash-chained deletion certificates. */
export interface CertificateStore {
  /**
   * Seals the next certificate of the tenant's chain for `input`, stores it and anchors it in the audit log.
   * Idempotent by (tenant, requestId, status): a repeat returns the certificate already issued.
   */
  issue(input: CertificateInput): Promise<DeletionCertificate>;
  get(tenant: string, certificateId: string): Promise<DeletionCertificate | null>;
  /** A request's certificates (a `partial`, then a `complete` one), in chain order. */
  byRequest(tenant: string, requestId: string): Promise<DeletionCertificate[]>;
  /** The tenant's certificates in chain order, optionally only those issued within a period. */
  list(tenant: string, period?: CertificatePeriod): AsyncIterable<DeletionCertificate>;
  head(tenant: string): Promise<DeletionCertificate | null>;
  /** The audit entry anchoring a certificate, or null while it is not (yet) anchored. */
  anchorOf(tenant: string, certificateId: string): Promise<CertificateAnchorRef | null>;
  /**
   * The certificate with its place in the audit log (entry, signed checkpoint, inclusion proof); null when there is
   * no such certificate. One issued before log anchors were kept is proven under the latest checkpoint, read only;
   * a NotFound names a certificate no published checkpoint covers yet.
   */
  anchored(tenant: string, certificateId: string): Promise<AnchoredCertificate | null>;
  /** Creates the unique indexes idempotency relies on; run once at the composition root. */
  ensureIndexes(): Promise<void>;
}

export interface MongoCertificateStoreDeps {
  signer: CertificateSigner;
  audit: AuditLog;
  clock?: () => Date;
  /** Attempts to claim a seq under contention before giving up with a Conflict. */
  maxAttempts?: number;
  /** Checkpoints and inclusion proofs of the anchoring entries; without it certificates carry no log anchor. */
  logAnchors?: Pick<LogAnchors, 'anchor' | 'latestAt' | 'cosigned'>;
}

type CertificateDoc = DeletionCertificate & { _id: string; anchor?: CertificateAnchorRef; logAnchor?: LogAnchor };

const LIST_BATCH = 64;
const LIST_CONCURRENCY = 16;

/** `_id` of a tenant's certificate at `seq`. */
export function certificateDocId(tenant: string, seq: number): string {
  return chainLinkId(tenant, seq);
}

/** Creates the MongoDB-backed certificate store. */
export function createMongoCertificateStore(db: Db, deps: MongoCertificateStoreDeps): CertificateStore {
  const { signer, audit } = deps;
  const clock = deps.clock ?? (() => new Date());
  const maxAttempts = deps.maxAttempts ?? 200;
  const certificates: Collection<CertificateDoc> = db.collection<CertificateDoc>(Collections.certificates);
  /** Last certificate seen per tenant: a lower bound of the head (certificates are never removed). */
  const heads = new Map<string, CertificateDoc>();
  /** Issues to one tenant run one at a time in this process; across processes the E11000 protocol decides. */
  const tails = new Map<string, Promise<unknown>>();

  const bySeq = (tenant: string, seq: number) => certificates.findOne({ _id: certificateDocId(tenant, seq) });

  const remember = (doc: CertificateDoc | null): void => {
    if (!doc) return;
    const known = heads.get(doc.tenant);
    if (!known || doc.seq >= known.seq) heads.set(doc.tenant, doc);
  };

  /** The head, searched upward from a known certificate by `_id` equality (the fast path on FerretDB). */
  const findHead = async (tenant: string): Promise<CertificateDoc | null> => {
    const head = await findChainHead((seq) => bySeq(tenant, seq), heads.get(tenant) ?? null);
    remember(head);
    return head;
  };

  /**
   * Anchors the certificate in the audit chain (and in a checkpoint of its tree) unless it is marked so already;
   * safe to repeat: the entry's idempotency key returns the entry already written.
   */
  const anchor = async (doc: CertificateDoc): Promise<CertificateDoc> => {
    if (doc.anchor && (doc.logAnchor || !deps.logAnchors)) return doc;
    const entry = await audit.append(certificateAnchor(toCertificate(doc)));
    const ref = { auditSeq: entry.seq, auditHash: entry.hash };
    const logAnchor = deps.logAnchors ? await deps.logAnchors.anchor(entry) : undefined;
    await certificates.updateOne({ _id: doc._id }, { $set: { anchor: ref, ...(logAnchor ? { logAnchor } : {}) } });
    const anchored = { ...doc, anchor: ref, ...(logAnchor ? { logAnchor } : {}) };
    remember(anchored);
    return anchored;
  };

  const serialize = <T>(tenant: string, fn: () => Promise<T>): Promise<T> => {
    const run = (tails.get(tenant) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    tails.set(tenant, tail);
    void tail.then(() => {
      if (tails.get(tenant) === tail) tails.delete(tenant);
    });
    return run;
  };

  const issueOne = async (input: CertificateInput): Promise<DeletionCertificate> => {
    const { tenant, requestId, status } = input;
    const certificateId = input.certificateId ?? defaultCertificateId(tenant, requestId, status);
    const existing = await certificates.findOne({ tenant, requestId, status });
    if (existing) return toCertificate(await anchor(existing));

    let head = await findHead(tenant);
    for (let attempt = 1; ; attempt++) {
      // An unanchored head means its issuer crashed before anchoring: finish that first, so it is not forgotten.
      if (head && !head.anchor) head = await anchor(head);
      const certificate = chainCertificate({ ...input, certificateId }, nextLink(head, clock()), signer);
      const doc: CertificateDoc = { _id: certificateDocId(tenant, certificate.seq), ...certificate };
      try {
        await certificates.insertOne(doc);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // Either this request's certificate exists (a concurrent duplicate) or the seq was taken.
        const duplicate = await certificates.findOne({ tenant, requestId, status });
        if (duplicate) return toCertificate(await anchor(duplicate));
        if (await certificates.findOne({ tenant, certificateId })) {
          throw new DomainError(
            ErrorType.Conflict,
            `certificateId: ${certificateId} names another request's certificate`,
            'certificateId',
          );
        }
        if (attempt >= maxAttempts) {
          throw new DomainError(
            ErrorType.Conflict,
            `certificate issue: no free seq after ${attempt} attempts (tenant ${tenant})`,
          );
        }
        if (attempt > 1) await sleep(Math.random() * Math.min(50, 2 ** attempt));
        head = (await bySeq(tenant, certificate.seq)) ?? (await findHead(tenant));
        remember(head);
        continue;
      }
      remember(doc);
      return toCertificate(await anchor(doc));
    }
  };

  return {
    async ensureIndexes() {
      await certificates.createIndex({ tenant: 1, requestId: 1, status: 1 }, { unique: true });
      await certificates.createIndex({ tenant: 1, certificateId: 1 }, { unique: true });
    },

    async issue(raw) {
      const input = parseCertificateInput(raw);
      return serialize(input.tenant, () => issueOne(input));
    },

    async get(tenant, certificateId) {
      const doc = await certificates.findOne({ tenant, certificateId });
      return doc ? toCertificate(doc) : null;
    },

    async byRequest(tenant, requestId) {
      const docs = await certificates.find({ tenant, requestId }).toArray();
      return docs.sort((a, b) => a.seq - b.seq).map(toCertificate);
    },

    async head(tenant) {
      checkTenant(tenant);
      const head = await findHead(tenant);
      return head ? toCertificate(head) : null;
    },

    async anchorOf(tenant, certificateId) {
      const doc = await certificates.findOne({ tenant, certificateId });
      return doc?.anchor ?? null;
    },

    async anchored(tenant, certificateId) {
      const doc = await certificates.findOne({ tenant, certificateId });
      if (!doc) return null;
      const logAnchor =
        doc.logAnchor ??
        (doc.anchor && deps.logAnchors ? await deps.logAnchors.latestAt(tenant, doc.anchor.auditSeq) : null);
      if (!logAnchor)
        throw new DomainError(
          ErrorType.NotFound,
          `certificate ${certificateId}: no published checkpoint covers its audit entry yet`,
          'id',
        );
      return anchoredCertificate(toCertificate(doc), (await deps.logAnchors?.cosigned(logAnchor)) ?? logAnchor);
    },

    async *list(tenant, period = {}) {
      checkTenant(tenant);
      const from = period.from?.toISOString();
      const to = period.to?.toISOString();
      // A snapshot up to the head as of now. issuedAt never decreases along the chain, so the period is one seq
      // range: bisect for its first seq, then read forward by `_id` equality in bounded parallel batches (FerretDB
      // scans the collection for a range filter or a sort; it answers an `_id` lookup from its index).
      const head = await findHead(tenant);
      if (!head) return;
      let seq = from ? await firstIssuedFrom(tenant, from, head.seq) : 1;
      while (seq <= head.seq) {
        const seqs = Array.from({ length: Math.min(LIST_BATCH, head.seq - seq + 1) }, (_, i) => seq + i);
        for (const doc of await mapBounded(seqs, LIST_CONCURRENCY, (s) => bySeq(tenant, s))) {
          // A missing seq is skipped, not papered over: the verifier reports the gap.
          if (!doc) continue;
          if (to && doc.issuedAt > to) return;
          yield toCertificate(doc);
        }
        seq += seqs.length;
      }
    },
  };

  /** The smallest seq whose certificate was issued at or after `from` (head + 1 when none). */
  async function firstIssuedFrom(tenant: string, from: string, headSeq: number): Promise<number> {
    let low = 1;
    let high = headSeq + 1;
    while (low < high) {
      const mid = low + Math.floor((high - low) / 2);
      const doc = await bySeq(tenant, mid);
      if (doc && doc.issuedAt >= from) high = mid;
      else low = mid + 1;
    }
    return low;
  }
}

function checkTenant(tenant: string): void {
  if (!TENANT_PATTERN.test(tenant)) throw validationError('tenant', 'must match ^[a-z0-9][a-z0-9-]{1,62}$');
}

function toCertificate(doc: CertificateDoc): DeletionCertificate {
  const { _id: _ignored, anchor: _anchor, logAnchor: _logAnchor, ...certificate } = doc;
  return certificate;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
