/**
 * The audit hash chain as pure functions: how an entry is hashed and how a sequence of entries is checked,
 * shared by the MongoDB adapter (to seal entries) and by the offline verifier (to check an export).
 */
import { sha256Hex } from '../../shared/sha256.js';
import { canonicalJson } from '../../shared/canonical-json.js';
import type { AuditEntry } from './audit-log.port.js';

/** `prevHash` of a tenant's first entry (seq 1). */
export const GENESIS_HASH = '0'.repeat(64);

/** An entry before it is sealed. */
export type UnsealedAuditEntry = Omit<AuditEntry, 'hash'>;

/** SHA-256 (hex) of the RFC 8785 form of every field but `hash` — unknown extra fields included, so adding one is detected. */
export function hashEntry(entry: UnsealedAuditEntry | AuditEntry): string {
  const { hash: _hash, ...rest } = entry as AuditEntry;
  return sha256Hex(canonicalJson(rest));
}

/** The entry with its `hash` set. */
export function sealEntry(entry: UnsealedAuditEntry): AuditEntry {
  return { ...entry, hash: hashEntry(entry) };
}

/** Where a chain first stops being honest; `seq` is the entry's own, or the one expected there when unreadable. */
export interface ChainBreak {
  seq: number;
  index: number;
  reason: string;
}

/**
 * The verdict on a chain. `headHash` is what the next entry's `prevHash` must be (empty only for an empty range
 * with no known anchor); `lastSeq` is the last verified seq.
 */
export type ChainVerification =
  { ok: true; count: number; headHash: string; lastSeq: number } | { ok: false; firstBad: ChainBreak };

export interface VerifyOptions {
  /** Every entry must belong to this tenant (otherwise: to the first entry's tenant). */
  tenant?: string;
  /** The first entry's seq; default 1, so that a dropped first entry is caught. Set it to verify a later range. */
  expectFromSeq?: number;
  /** The first entry's `prevHash` (the hash of the entry before the range); default the genesis hash when starting at seq 1. */
  expectPrevHash?: string;
  /**
   * The hash the last entry must have (e.g. anchored in a certificate; export up to that seq). Without it a chain
   * cut short at the end still verifies: nothing inside a chain says it was the last entry.
   */
  expectHeadHash?: string;
}

/** An incremental verifier, for exports too large to hold in memory: push entries in order, then read `result()`. */
export interface ChainVerifier {
  /** Checks the next entry; returns false once the chain is broken (later pushes are ignored). */
  push(entry: unknown): boolean;
  /** Records an entry that could not even be parsed at this position. */
  pushUnreadable(reason: string): void;
  result(): ChainVerification;
}

const HEX64 = /^[0-9a-f]{64}$/;
const OUTCOMES = new Set(['ok', 'refused', 'error']);

/** Starts an incremental verification (see `verifyChain`). */
export function createChainVerifier(opts: VerifyOptions = {}): ChainVerifier {
  const fromSeq = opts.expectFromSeq ?? 1;
  let index = 0;
  let tenant = opts.tenant;
  let expectedSeq = fromSeq;
  let expectedPrev: string | undefined = opts.expectPrevHash ?? (fromSeq === 1 ? GENESIS_HASH : undefined);
  let headHash = expectedPrev ?? '';
  let broken: ChainBreak | null = null;

  const fail = (seq: number, reason: string): false => {
    broken = { seq, index, reason };
    return false;
  };

  return {
    push(raw) {
      if (broken) return false;
      const malformed = describeMalformed(raw);
      if (malformed) {
        const claimed = (raw as { seq?: unknown } | null)?.seq;
        return fail(typeof claimed === 'number' ? claimed : expectedSeq, `malformed entry: ${malformed}`);
      }
      const entry = raw as AuditEntry;
      if (tenant !== undefined && entry.tenant !== tenant) {
        return fail(
          entry.seq,
          index === 0 || opts.tenant !== undefined
            ? `wrong tenant: expected ${tenant}, found ${entry.tenant}`
            : `tenant changed mid-chain: expected ${tenant}, found ${entry.tenant}`,
        );
      }
      if (index > 0 && entry.seq === expectedSeq - 1) return fail(entry.seq, `duplicate seq ${entry.seq}`);
      if (entry.seq < expectedSeq) {
        return fail(entry.seq, `out of order: expected seq ${expectedSeq}, found ${entry.seq} (entries reordered)`);
      }
      if (entry.seq > expectedSeq) {
        return fail(
          entry.seq,
          `seq gap: expected seq ${expectedSeq}, found ${entry.seq} (entries missing or reordered)`,
        );
      }
      if (recompute(entry) !== entry.hash)
        return fail(entry.seq, 'hash mismatch: the entry was changed after it was sealed');
      if (expectedPrev !== undefined && entry.prevHash !== expectedPrev) {
        return fail(
          entry.seq,
          index === 0
            ? 'prevHash mismatch: the first entry does not continue from the expected hash'
            : `prevHash mismatch: does not link to the hash of seq ${expectedSeq - 1}`,
        );
      }
      tenant = entry.tenant;
      expectedPrev = entry.hash;
      headHash = entry.hash;
      expectedSeq = entry.seq + 1;
      index++;
      return true;
    },
    pushUnreadable(reason) {
      if (!broken) fail(expectedSeq, `unreadable entry: ${reason}`);
    },
    result() {
      if (broken) return { ok: false, firstBad: broken };
      if (opts.expectHeadHash !== undefined && headHash !== opts.expectHeadHash) {
        return {
          ok: false,
          firstBad: {
            seq: expectedSeq,
            index,
            reason: `head mismatch: the chain ends at seq ${expectedSeq - 1}, whose hash is not the expected head (cut short?)`,
          },
        };
      }
      return { ok: true, count: index, headHash, lastSeq: expectedSeq - 1 };
    },
  };
}

/**
 * Checks that `entries` are one unbroken chain of one tenant: consecutive seqs from `expectFromSeq` (default 1),
 * each hash matching the entry's content, each `prevHash` the previous entry's hash. Names the first bad entry.
 */
export function verifyChain(entries: Iterable<AuditEntry>, opts: VerifyOptions = {}): ChainVerification {
  const verifier = createChainVerifier(opts);
  for (const entry of entries) if (!verifier.push(entry)) break;
  return verifier.result();
}

/** The entry's hash, or null when its values have no canonical form (e.g. NaN in details). */
function recompute(entry: AuditEntry): string | null {
  try {
    return hashEntry(entry);
  } catch {
    return null;
  }
}

/** Why a parsed value is not an entry, or null when it has the entry's shape. */
function describeMalformed(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const e = raw as Record<string, unknown>;
  for (const field of ['tenant', 'at', 'actor', 'action', 'idempotencyKey'] as const) {
    if (typeof e[field] !== 'string') return `${field} must be a string`;
  }
  if (typeof e.seq !== 'number' || !Number.isSafeInteger(e.seq) || e.seq < 1) return 'seq must be a positive integer';
  if (e.target !== null && typeof e.target !== 'string') return 'target must be a string or null';
  if (typeof e.outcome !== 'string' || !OUTCOMES.has(e.outcome)) return 'outcome must be ok, refused or error';
  if (typeof e.details !== 'object' || e.details === null || Array.isArray(e.details))
    return 'details must be an object';
  for (const [key, value] of Object.entries(e.details)) {
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value))
      return `details.${key} must be a scalar`;
  }
  if (typeof e.prevHash !== 'string' || !HEX64.test(e.prevHash)) return 'prevHash must be 64 hex digits';
  if (typeof e.hash !== 'string' || !HEX64.test(e.hash)) return 'hash must be 64 hex digits';
  return null;
}
