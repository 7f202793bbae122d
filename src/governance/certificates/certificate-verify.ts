/**
 * Offline verification of a certificate export (JSON Lines, one certificate per line, in chain order), optionally
 * against an audit export of the same tenant. Needs no server: only the public key(s), these rules and the audit
 * chain rules.
 *
 * Per certificate, in this order (the first failure is reported, naming the line and the certificate):
 * one tenant; consecutive seqs (no gap, duplicate or reordering); hash = SHA-256 of the canonical body; keyId names
 * a given key and the Ed25519 signature verifies; the body is well-formed; previousCertificateHash links to the
 * previous certificate's hash; issuedAt never goes backwards and lies in the declared period; and, with an audit
 * export, an `erasure.certified` entry anchors it with the same hash.
 *
 * Edges. Without a declared period the export must be the whole chain (from seq 1, genesis link), so a dropped
 * first certificate is caught. With `from`, it may start later; then, given the audit export, its first link is
 * checked against the anchor of the certificate before it, which must have been issued before `from`. With `to`
 * and the audit export, every certificate anchored as issued within the period must be in the export, so a
 * dropped last certificate is caught too. Nothing inside a chain says it was the last link, so without `to` and an
 * audit export a cut-short tail cannot be detected.
 */
import { sha256Hex } from '../../shared/sha256.js';
import { createChainVerifier, type ChainVerifier } from '../audit/audit-chain.js';
import {
  CERTIFICATE_ANCHOR_ACTION,
  GENESIS_CERTIFICATE_HASH,
  certificateSigningBytes,
  type DeletionCertificate,
} from './certificate.js';
import { describeInvalidCertificate } from './certificate-schema.js';
import { loadVerificationKey, type VerificationKey } from './verification-key.js';

/** Where verification first failed: which file, which line (1-based), which certificate, and why. */
export interface CertificateBreak {
  source: 'certificates' | 'audit';
  line: number;
  /** The certificate concerned (for a missing one: the id its anchor names), or null when unknown. */
  certificateId: string | null;
  /** The certificate's seq (for `source: 'audit'`, the audit entry's seq), or null when unknown. */
  seq: number | null;
  /** Stable text: it starts with a fixed phrase (e.g. `hash mismatch:`) that scripts may match. */
  reason: string;
}

/** The verdict. `anchored` and `auditEntries` are null when no audit export was given. */
export type CertificateVerification =
  | {
      ok: true;
      tenant: string | null;
      count: number;
      firstSeq: number | null;
      lastSeq: number | null;
      /** Hash of the last certificate (what the next one must link to). */
      headHash: string;
      keyIds: string[];
      anchored: number | null;
      auditEntries: number | null;
    }
  | { ok: false; firstBad: CertificateBreak };

export interface CertificateVerifyOptions {
  /** Ed25519 public key(s), SPKI PEM; each certificate must verify under the key its keyId names. */
  publicKeys: string | readonly string[];
  /** Every certificate must belong to this tenant (otherwise: to the first one's). */
  tenant?: string;
  /** The period the export claims to cover (inclusive); `from` lets it start after seq 1. */
  from?: Date;
  to?: Date;
  /** The first certificate's seq; default 1 unless `from` is given. */
  expectFromSeq?: number;
  /** The first certificate's previousCertificateHash (default the genesis hash at seq 1). */
  expectPrevHash?: string;
}

/** A certificate's anchor, as read from a verified audit export. */
export interface CertificateAnchorEntry {
  certificateId: string;
  certificateHash: string;
  certificateSeq: number;
  issuedAt: string;
  auditSeq: number;
  line: number;
}

/** The anchors of a verified audit export, by certificate id and by certificate seq. */
export interface AuditAnchors {
  tenant: string | null;
  entries: number;
  byId: Map<string, CertificateAnchorEntry>;
  bySeq: Map<number, CertificateAnchorEntry>;
}

/** Incremental verification, for exports too large to hold in memory: push lines in order, then read `result()`. */
export interface CertificateVerifier {
  /** Checks the next line; false once verification has failed (later pushes are ignored). */
  push(line: string): boolean;
  result(): CertificateVerification;
}

/**
 * Reads an audit export (JSONL) with the audit chain rules — the same engine as `verifyAuditJsonl` — and collects
 * its certificate anchors. Fails on the first bad audit entry, on a malformed anchor or on a certificate anchored
 * twice.
 */
export function createAnchorReader(): {
  push(line: string): boolean;
  result(): { ok: true; anchors: AuditAnchors } | { ok: false; firstBad: CertificateBreak };
} {
  const chain: ChainVerifier = createChainVerifier();
  const anchors: AuditAnchors = { tenant: null, entries: 0, byId: new Map(), bySeq: new Map() };
  let line = 0;
  let chainBrokeAt = 0;
  let broken: CertificateBreak | null = null;

  const fail = (bad: Omit<CertificateBreak, 'source' | 'line'>): false => {
    broken = { source: 'audit', line, ...bad };
    return false;
  };

  return {
    push(text) {
      line++;
      if (broken || chainBrokeAt) return false;
      if (text.trim() === '') return true;
      let entry: unknown;
      try {
        entry = JSON.parse(text);
      } catch {
        // The parser's message may quote the line's content; say only that it is not JSON.
        chain.pushUnreadable('not valid JSON');
        chainBrokeAt = line;
        return false;
      }
      if (!chain.push(entry)) {
        chainBrokeAt = line;
        return false;
      }
      const e = entry as {
        tenant: string;
        seq: number;
        action: string;
        target: string | null;
        details: Record<string, unknown>;
      };
      anchors.tenant = e.tenant;
      anchors.entries++;
      if (e.action !== CERTIFICATE_ANCHOR_ACTION) return true;
      const { certificateHash, certificateSeq, issuedAt } = e.details;
      if (
        typeof e.target !== 'string' ||
        typeof certificateHash !== 'string' ||
        typeof certificateSeq !== 'number' ||
        typeof issuedAt !== 'string'
      ) {
        return fail({
          certificateId: typeof e.target === 'string' ? e.target : null,
          seq: e.seq,
          reason:
            'malformed anchor: an erasure.certified entry needs target, certificateHash, certificateSeq and issuedAt',
        });
      }
      const anchor = { certificateId: e.target, certificateHash, certificateSeq, issuedAt, auditSeq: e.seq, line };
      const earlier = anchors.byId.get(anchor.certificateId) ?? anchors.bySeq.get(certificateSeq);
      if (earlier) {
        return fail({
          certificateId: anchor.certificateId,
          seq: e.seq,
          reason: `duplicate anchor: certificate ${earlier.certificateId} (seq ${earlier.certificateSeq}) is already anchored at audit seq ${earlier.auditSeq}`,
        });
      }
      anchors.byId.set(anchor.certificateId, anchor);
      anchors.bySeq.set(certificateSeq, anchor);
      return true;
    },
    result() {
      if (broken) return { ok: false, firstBad: broken };
      const verdict = chain.result();
      if (!verdict.ok) {
        const at = chainBrokeAt || line + 1;
        return {
          ok: false,
          firstBad: {
            source: 'audit',
            line: at,
            certificateId: null,
            seq: verdict.firstBad.seq,
            reason: `audit chain broken: ${verdict.firstBad.reason}`,
          },
        };
      }
      return { ok: true, anchors };
    },
  };
}

/** Starts verifying a certificate export; `anchors` from a verified audit export enables the anchor checks. */
export function createCertificateVerifier(
  options: CertificateVerifyOptions,
  anchors?: AuditAnchors,
): CertificateVerifier {
  const keys = verificationKeys(options.publicKeys);
  const from = options.from?.toISOString();
  const to = options.to?.toISOString();
  let tenant = options.tenant ?? anchors?.tenant ?? undefined;

  let expectedSeq: number | undefined = options.expectFromSeq ?? (from === undefined ? 1 : undefined);
  let expectedPrev: string | undefined = options.expectPrevHash;
  let prevIssuedAt: string | undefined;
  let firstSeq: number | null = null;
  let headHash = options.expectPrevHash ?? GENESIS_CERTIFICATE_HASH;
  let line = 0;
  let count = 0;
  let lastLine = 0;
  const seen = new Set<string>();
  const keyIds = new Set<string>();
  let broken: CertificateBreak | null =
    options.tenant !== undefined && anchors?.tenant && anchors.tenant !== options.tenant
      ? {
          source: 'audit',
          line: 1,
          certificateId: null,
          seq: null,
          reason: `wrong tenant: the audit export is of tenant ${anchors.tenant}, not ${options.tenant}`,
        }
      : null;

  const fail = (certificateId: string | null, seq: number | null, reason: string, at = line): false => {
    broken = { source: 'certificates', line: at, certificateId, seq, reason };
    return false;
  };

  const check = (raw: unknown): boolean => {
    const shapeProblem = describeShape(raw);
    if (shapeProblem) {
      const r = raw as { certificateId?: unknown; seq?: unknown } | null;
      const id = typeof r?.certificateId === 'string' ? r.certificateId : null;
      const seq = typeof r?.seq === 'number' ? r.seq : null;
      return fail(id, seq, `malformed certificate: ${shapeProblem}`);
    }
    const c = raw as DeletionCertificate;
    const id = c.certificateId;
    if (tenant !== undefined && c.tenant !== tenant) {
      const expected = options.tenant === undefined && count === 0 ? `the audit export's tenant ${tenant}` : tenant;
      return fail(
        id,
        c.seq,
        count === 0
          ? `wrong tenant: expected ${expected}, found ${c.tenant}`
          : `tenant changed mid-chain: expected ${tenant}, found ${c.tenant}`,
      );
    }
    if (expectedSeq !== undefined) {
      if (count > 0 && c.seq === expectedSeq - 1) return fail(id, c.seq, `duplicate seq ${c.seq}`);
      if (c.seq < expectedSeq)
        return fail(id, c.seq, `out of order: expected seq ${expectedSeq}, found ${c.seq} (certificates reordered)`);
      if (c.seq > expectedSeq) {
        return fail(
          id,
          c.seq,
          `seq gap: expected seq ${expectedSeq}, found ${c.seq} (certificates missing or reordered)`,
        );
      }
    }
    const unsealed = describeBadSeal(c, keys);
    if (unsealed) return fail(id, c.seq, unsealed);

    if (count === 0) {
      if (expectedPrev === undefined && c.seq === 1) expectedPrev = GENESIS_CERTIFICATE_HASH;
      if (expectedPrev === undefined && anchors) {
        // A period export starting mid-chain: link its first certificate to the anchored one before it.
        const before = anchors.bySeq.get(c.seq - 1);
        if (!before) {
          return fail(
            id,
            c.seq,
            `unlinked start: the audit export anchors no certificate at seq ${c.seq - 1}, so the first link cannot be checked`,
          );
        }
        if (from !== undefined && before.issuedAt >= from) {
          return fail(
            before.certificateId,
            before.certificateSeq,
            `missing certificate: seq ${before.certificateSeq} was issued within the period (audit seq ${before.auditSeq}) but is not in the export`,
          );
        }
        expectedPrev = before.certificateHash;
      }
    }
    if (expectedPrev !== undefined && c.previousCertificateHash !== expectedPrev) {
      return fail(
        id,
        c.seq,
        count === 0
          ? 'previousCertificateHash mismatch: the first certificate does not continue from the expected hash'
          : `previousCertificateHash mismatch: does not link to the hash of seq ${c.seq - 1}`,
      );
    }
    if (prevIssuedAt !== undefined && c.issuedAt < prevIssuedAt) {
      return fail(id, c.seq, `issuedAt goes backwards: earlier than seq ${c.seq - 1}'s`);
    }
    if ((from !== undefined && c.issuedAt < from) || (to !== undefined && c.issuedAt > to)) {
      return fail(id, c.seq, `outside the period: issued at ${c.issuedAt}, not within ${from ?? '-∞'} … ${to ?? '+∞'}`);
    }
    if (anchors) {
      const anchor = anchors.byId.get(id);
      if (!anchor)
        return fail(
          id,
          c.seq,
          `not anchored: no ${CERTIFICATE_ANCHOR_ACTION} entry for this certificate in the audit export`,
        );
      if (anchor.certificateHash !== c.hash || anchor.certificateSeq !== c.seq) {
        return fail(
          id,
          c.seq,
          `anchor mismatch: audit seq ${anchor.auditSeq} records another hash or seq for this certificate`,
        );
      }
    }
    if (firstSeq === null) firstSeq = c.seq;
    tenant = c.tenant;
    expectedSeq = c.seq + 1;
    expectedPrev = c.hash;
    headHash = c.hash;
    prevIssuedAt = c.issuedAt;
    seen.add(id);
    keyIds.add(c.keyId);
    count++;
    lastLine = line;
    return true;
  };

  return {
    push(text) {
      line++;
      if (broken) return false;
      if (text.trim() === '') return true;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return fail(null, expectedSeq ?? null, 'unreadable line: not valid JSON');
      }
      return check(parsed);
    },
    result() {
      if (broken) return { ok: false, firstBad: broken };
      if (anchors) {
        // Inclusion: a certificate the audit chain anchors as issued within the declared period must be exported.
        // Without `to` nothing says where the export should end (see the module comment).
        const missing = [...anchors.bySeq.values()]
          .filter((a) => to !== undefined && a.issuedAt <= to && (from === undefined || a.issuedAt >= from))
          .filter((a) => !seen.has(a.certificateId))
          .sort((a, b) => a.certificateSeq - b.certificateSeq)[0];
        if (missing) {
          return {
            ok: false,
            firstBad: {
              source: 'certificates',
              line: lastLine + 1,
              certificateId: missing.certificateId,
              seq: missing.certificateSeq,
              reason: `missing certificate: seq ${missing.certificateSeq} is anchored at audit seq ${missing.auditSeq} as issued within the period but is not in the export`,
            },
          };
        }
      }
      return {
        ok: true,
        tenant: tenant ?? null,
        count,
        firstSeq,
        lastSeq: firstSeq === null ? null : (expectedSeq ?? 1) - 1,
        headHash,
        keyIds: [...keyIds],
        anchored: anchors ? count : null,
        auditEntries: anchors ? anchors.entries : null,
      };
    },
  };
}

/** The certificate and audit inputs: JSONL text, or its lines. */
export interface CertificateExports {
  certificates: string | Iterable<string>;
  audit?: string | Iterable<string>;
}

/** Verifies a certificate export (and, when given, its anchors in an audit export) held in memory. */
export function verifyCertificatesJsonl(
  input: CertificateExports,
  options: CertificateVerifyOptions,
): CertificateVerification {
  let anchors: AuditAnchors | undefined;
  if (input.audit !== undefined) {
    const reader = createAnchorReader();
    for (const line of linesOf(input.audit)) if (!reader.push(line)) break;
    const read = reader.result();
    if (!read.ok) return read;
    anchors = read.anchors;
  }
  const verifier = createCertificateVerifier(options, anchors);
  for (const line of linesOf(input.certificates)) if (!verifier.push(line)) break;
  return verifier.result();
}

/** As `verifyCertificatesJsonl`, over streams of lines (e.g. `readline` over files), in memory bounded by the anchors. */
export async function verifyCertificatesJsonlStream(
  input: { certificates: AsyncIterable<string>; audit?: AsyncIterable<string> },
  options: CertificateVerifyOptions,
): Promise<CertificateVerification> {
  let anchors: AuditAnchors | undefined;
  if (input.audit !== undefined) {
    const reader = createAnchorReader();
    for await (const line of input.audit) if (!reader.push(line)) break;
    const read = reader.result();
    if (!read.ok) return read;
    anchors = read.anchors;
  }
  const verifier = createCertificateVerifier(options, anchors);
  for await (const line of input.certificates) if (!verifier.push(line)) break;
  return verifier.result();
}

function linesOf(input: string | Iterable<string>): Iterable<string> {
  return typeof input === 'string' ? input.split('\n') : input;
}

/** The given public keys (SPKI PEM) by key id; at least one. */
export function verificationKeys(publicKeys: string | readonly string[]): Map<string, VerificationKey> {
  const keys = new Map<string, VerificationKey>();
  for (const pem of typeof publicKeys === 'string' ? [publicKeys] : publicKeys) {
    const key = loadVerificationKey(pem);
    keys.set(key.keyId, key);
  }
  if (keys.size === 0) throw new TypeError('publicKeys: at least one public key is required');
  return keys;
}

/**
 * Why one certificate is not sealed as it claims (stable reasons: `malformed certificate:`, `hash mismatch:`,
 * `unknown key:`, `signature invalid:`), or null when its hash, signature and body hold.
 */
export function describeBadSeal(raw: unknown, keys: ReadonlyMap<string, VerificationKey>): string | null {
  const shapeProblem = describeShape(raw);
  if (shapeProblem) return `malformed certificate: ${shapeProblem}`;
  const c = raw as DeletionCertificate;
  const bytes = signingBytes(c);
  if (!bytes || sha256Hex(bytes) !== c.hash) return 'hash mismatch: the certificate was changed after it was sealed';
  const key = keys.get(c.keyId);
  if (!key) return `unknown key: signed with key ${c.keyId}, which is not among the given public keys`;
  if (!key.verify(bytes, c.signature))
    return `signature invalid: the Ed25519 signature does not verify with key ${c.keyId}`;
  const invalid = describeInvalidCertificate(c);
  return invalid ? `malformed certificate: ${invalid}` : null;
}

/** The minimum shape the chain checks read; the full schema is checked once the signature holds. */
function describeShape(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const c = raw as Record<string, unknown>;
  for (const field of [
    'certificateId',
    'tenant',
    'issuedAt',
    'previousCertificateHash',
    'hash',
    'signature',
    'keyId',
  ] as const) {
    if (typeof c[field] !== 'string') return `${field}: must be a string`;
  }
  if (typeof c.seq !== 'number' || !Number.isSafeInteger(c.seq) || c.seq < 1) return 'seq: must be a positive integer';
  return null;
}

/** The canonical body, or null when it has none (e.g. a lone surrogate smuggled into a field). */
function signingBytes(certificate: DeletionCertificate): Uint8Array | null {
  try {
    return certificateSigningBytes(certificate);
  } catch {
    return null;
  }
}
