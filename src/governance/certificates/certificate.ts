/**
 * The deletion certificate: what one erasure request proved, in a form an auditor verifies offline.
 *
 * Format (`lethe.deletion-certificate/1`):
 * - the **body** is every field but `hash`, `signature` and `keyId`, serialised as RFC 8785 canonical JSON (UTF-8);
 * - `hash` is the SHA-256 (lower-case hex) of those bytes;
 * - `signature` is Ed25519 over **the same canonical bytes** (not over the hash), in standard padded base64. Ed25519
 *   hashes its message itself (SHA-512); signing the body keeps the scheme textbook, so that any Ed25519 tool
 *   checks a certificate without Lethe code (`openssl pkeyutl -verify -pubin -inkey key.pem -rawin`). The body's
 *   `format` field separates these signatures from anything else the key might sign;
 * - `keyId` is the first 16 hex digits of the SHA-256 of the public key's SPKI DER encoding;
 * - `previousCertificateHash` is the `hash` of the tenant's certificate at `seq - 1` (64 zeros at seq 1), so the
 *   tenant's certificates form one hash chain.
 *
 * No personal data: the body admits only opaque ids, keyed hashes, counts, timestamps and short engine-written
 * statements, and `certificate-schema.ts` enforces it (no `@`, no free-form ids). The data subject appears only as
 * the keyed `selectorHash`; memory content never appears.
 */
import { sha256Hex } from '../../shared/sha256.js';
import { canonicalJson } from '../../shared/canonical-json.js';
import type { AuditEntryInput } from '../audit/audit-log.port.js';
import type { CertificateSigner } from './signing.js';
import type { ExposureStatement } from '../../shared/api-contract/erasure.js';

/** The format tag every body carries (domain separation for the signature, and versioning). */
export const CERTIFICATE_FORMAT = 'lethe.deletion-certificate/1';

/** `previousCertificateHash` of a tenant's first certificate (seq 1). */
export const GENESIS_CERTIFICATE_HASH = '0'.repeat(64);

/** The audit action under which a certificate is anchored in the tenant's audit chain. */
export const CERTIFICATE_ANCHOR_ACTION = 'erasure.certified';

/** How far a place where erased data might survive is beyond reach. */
export type AssuranceLevel = 'L1' | 'L2' | 'L3';

/** The policy decision that authorised the erasure. */
export interface CertificatePolicyDecision {
  policyId: string;
  policyVersion: number;
  outcome: string;
  ruleId: string;
}

/** A legal hold and the records it kept from being erased (opaque ids only). */
export interface HoldExemption {
  holdId: string;
  exemptedCount: number;
  exemptedIds: string[];
}

/** The deletion closure: located records, records derived from them, how many belonged to other subjects. */
export interface ClosureSummary {
  located: number;
  derived: number;
  /** Records of other subjects swept in by lineage (counted in `derived`). */
  collateral: number;
  /** `located + derived`; equals `ids.length`. */
  total: number;
  ids: string[];
}

/** What was done in one MongoDB collection. */
export interface MongoStoreResult {
  store: 'mongodb';
  collection: string;
  /** e.g. `deleteOne+compact`. */
  action: string;
  deleted: number;
  compacted: boolean;
}

/** What was done in one Elasticsearch index. */
export interface ElasticsearchStoreResult {
  store: 'elasticsearch';
  index: string;
  /** e.g. `bulk delete+forcemerge(only_expunge_deletes)+flush`. */
  action: string;
  deleted: number;
  /** Deleted-but-present documents `_segments` reported afterwards (0 when expunged). */
  deletedDocsAfter: number;
}

/** What was done in a cache or any other store. */
export interface CacheStoreResult {
  store: 'cache';
  name: string;
  action: string;
  deleted: number;
}

/** Per-store actions and results. */
export type StoreResult = MongoStoreResult | ElasticsearchStoreResult | CacheStoreResult;

export type ProbeKind = 'id' | 'text' | 'vector' | 'content-hash' | 'subject' | 'locate' | 'data-key';

/** One post-purge probe: how many erased records it looked for, and how many it still found. */
export interface ProbeResult {
  /**
   * `content-hash`: MongoDB queried by the erased contents' hashes; `subject`: the index queried by the subject;
   * `locate`: the request's selector and lineage run again after the purge.
   */
  kind: ProbeKind;
  target: 'api' | 'mongodb' | 'elasticsearch';
  /**
   * The concrete Elasticsearch indices the probe ran on (a vector probe runs only where the vectors are of the
   * verifying process's model). Absent on certificates issued before probes named them.
   */
  indices?: string[];
  checked: number;
  /**
   * Text and vector probes: the distinct erased sentences there were to look for (those of five words or more of the
   * closure's own records); `checked` says how many of them the probe looked for. Absent on certificates issued
   * before every sentence was probed.
   */
  sentences?: number;
  /**
   * The text probe of the governed search: the distinct records it could serve (every document its filters admit,
   * re-read and judged, with the records their disputes disclose), each checked against every sentence. Absent on
   * certificates issued when each sentence was searched instead.
   */
  served?: number;
  /** The text probe of the governed search: how many of the sentences were also searched through it as queries. */
  searched?: number;
  /** Erased records the probe still reached. */
  found: number;
  /**
   * Records outside the erased set the probe reached with erased content (copies under other ids, held records,
   * records erased in a later round). Absent on certificates issued before probes looked across the tenant.
   */
  outside?: number;
}

/** A copy of erased content under another id that the probes found, and what the DPO decided. Ids only. */
export interface CertificateFinding {
  id: string;
  kind: 'memory' | 'event';
  /** `kind:target` of the probes that reached it. */
  probes: string[];
  /** `extended`: the request erased it too (it is in the closure); `stated`: certified with the copy left. */
  resolution: 'extended' | 'stated';
}

/** One step of the erasure, with its timestamps (ISO 8601 UTC) and counts. */
export interface StepRecord {
  step: string;
  startedAt: string;
  finishedAt: string;
  counts: Record<string, number>;
}

/** When an L3 survival ends: at a date (ISO 8601 UTC), or on a condition. */
export type AssuranceLapse = { at: string } | { condition: string };

/** For one place where the data may survive, what was proven there. */
export interface AssuranceClaim {
  /** e.g. `mongodb:memories`, `elasticsearch:segments`, `postgresql:wal`, `temporal:history`. */
  place: string;
  /** L1 unreachable by any probe; L2 expunged from live storage; L3 beyond reach only by expiry or key destruction. */
  level: AssuranceLevel;
  statement: string;
  /** Required at L3. */
  lapses?: AssuranceLapse;
}

/** The signed part of a certificate. */
export interface CertificateBody {
  format: typeof CERTIFICATE_FORMAT;
  certificateId: string;
  tenant: string;
  /** Position in the tenant's certificate chain, from 1, without gaps. */
  seq: number;
  requestId: string;
  /** ISO 8601 UTC; never earlier than the previous certificate's. */
  issuedAt: string;
  /** Keyed hash (HMAC) of the erasure selector: the subject is never named in the clear. */
  selectorHash: string;
  /** Principal id of the requester. */
  requester: string;
  /** A code such as `gdpr-art17-1a`, `retention-expiry`, `correction`. */
  legalGround: string;
  policy: CertificatePolicyDecision;
  holds: HoldExemption[];
  /** `partial` while legal holds exempt records; `complete` once nothing is exempted. */
  status: 'complete' | 'partial';
  closure: ClosureSummary;
  stores: StoreResult[];
  probes: ProbeResult[];
  steps: StepRecord[];
  assurance: AssuranceClaim[];
  /** Absent on certificates issued before exposure tracing existed. */
  exposure?: ExposureStatement;
  /** Copies found outside the closure; absent when there were none (and on older certificates). */
  findings?: CertificateFinding[];
  previousCertificateHash: string;
}

/** The fields that seal a body. */
export interface CertificateSeal {
  /** SHA-256 (hex) of the canonical body. */
  hash: string;
  /** Ed25519 over the canonical body, base64. */
  signature: string;
  /** First 16 hex digits of SHA-256(SPKI DER) of the signing key's public half. */
  keyId: string;
}

/** A sealed deletion certificate, as stored and exported. */
export type DeletionCertificate = CertificateBody & CertificateSeal;

/** What the erasure states; the store adds the chain fields (seq, issuedAt, previousCertificateHash) and the seal. */
export type CertificateInput = Omit<
  CertificateBody,
  'format' | 'certificateId' | 'seq' | 'issuedAt' | 'previousCertificateHash'
> & {
  /** Default: derived from tenant, request id and status, so a retried issue names the same certificate. */
  certificateId?: string;
};

/** The body of a certificate: every field but the seal (unknown extra fields included, so adding one is detected). */
export function certificateBody(certificate: DeletionCertificate | CertificateBody): Record<string, unknown> {
  const { hash: _hash, signature: _signature, keyId: _keyId, ...body } = certificate as DeletionCertificate;
  return body;
}

/** The bytes that are hashed and signed: the RFC 8785 form of the body. */
export function certificateSigningBytes(certificate: DeletionCertificate | CertificateBody): Uint8Array {
  return new TextEncoder().encode(canonicalJson(certificateBody(certificate)));
}

/** SHA-256 (hex) of the canonical body. */
export function hashCertificate(certificate: DeletionCertificate | CertificateBody): string {
  return sha256Hex(certificateSigningBytes(certificate));
}

/** Hashes and signs a body. */
export function sealCertificate(body: CertificateBody, signer: CertificateSigner): DeletionCertificate {
  const bytes = certificateSigningBytes(body);
  return {
    ...body,
    hash: sha256Hex(bytes),
    signature: signer.sign(bytes),
    keyId: signer.keyId,
  };
}

/** The deterministic default certificate id of a request's certificate with this status. */
export function defaultCertificateId(tenant: string, requestId: string, status: CertificateBody['status']): string {
  const digest = sha256Hex(canonicalJson([tenant, requestId, status]));
  return `crt_${digest.slice(0, 32)}`;
}

/** The chain position a new certificate takes on top of `head` (null: the tenant has none yet). */
export interface ChainLink {
  seq: number;
  previousCertificateHash: string;
  /** The later of `now` and the head's issuedAt, so issuedAt never decreases along the chain. */
  issuedAt: string;
}

/** Where the next certificate goes after `head`. */
export function nextLink(
  head: (Pick<CertificateBody, 'seq' | 'issuedAt'> & { hash: string }) | null,
  now: Date,
): ChainLink {
  const nowIso = now.toISOString();
  return {
    seq: (head?.seq ?? 0) + 1,
    previousCertificateHash: head?.hash ?? GENESIS_CERTIFICATE_HASH,
    issuedAt: head && head.issuedAt > nowIso ? head.issuedAt : nowIso,
  };
}

/** Builds and seals the certificate for `input` at `link` in `tenant`'s chain. */
export function chainCertificate(
  input: CertificateInput,
  link: ChainLink,
  signer: CertificateSigner,
): DeletionCertificate {
  const { certificateId, ...stated } = input;
  return sealCertificate(
    {
      format: CERTIFICATE_FORMAT,
      certificateId: certificateId ?? defaultCertificateId(input.tenant, input.requestId, input.status),
      ...stated,
      seq: link.seq,
      issuedAt: link.issuedAt,
      previousCertificateHash: link.previousCertificateHash,
    },
    signer,
  );
}

/**
 * The audit entry that anchors a certificate in the tenant's audit chain. Its idempotency key makes the anchor
 * exactly-once however often it is retried; `certificateSeq` and `issuedAt` let a verifier check that a period
 * export holds every certificate anchored in that period.
 */
export function certificateAnchor(certificate: DeletionCertificate): AuditEntryInput & { idempotencyKey: string } {
  return {
    tenant: certificate.tenant,
    actor: 'system',
    action: CERTIFICATE_ANCHOR_ACTION,
    target: certificate.certificateId,
    outcome: 'ok',
    details: {
      certificateHash: certificate.hash,
      certificateSeq: certificate.seq,
      issuedAt: certificate.issuedAt,
      requestId: certificate.requestId,
      status: certificate.status,
    },
    idempotencyKey: `certificate:${certificate.certificateId}`,
  };
}
