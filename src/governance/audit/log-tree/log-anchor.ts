/**
 * Where a signed document sits in its tenant's audit log, in a form an auditor checks with the log's verifier key
 * alone: the audit entry that records the document (ids and keyed hashes only), its leaf index, a signed checkpoint
 * of a tree that holds it, and the inclusion proof from the leaf to that checkpoint's root. Verifying recomputes the
 * entry's hash from its canonical form, the leaf from that hash, the root from the leaf and the proof, and opens
 * the checkpoint under the key: no chain export, no server. Given a later checkpoint the auditor kept (and a
 * consistency proof), it also shows that the anchor's tree is a prefix of that one, so an anchor into a rewritten
 * history is refused. Pure code: every input is given.
 */
import { hashEntry } from '../audit-chain.js';
import type { AuditEntry } from '../audit-log.port.js';
import { parseCheckpoint, type Checkpoint } from './checkpoint.js';
import { checkConsistency } from './consistency-check.js';
import { leafHash, type Hash } from './merkle-tree.js';
import { verifyInclusion } from './merkle-verify.js';
import { noteVerifier, openNote, parseNote, type NoteVerifier } from './signed-note.js';
import { fromBase64, fromHex, toBase64 } from '../../../shared/bytes.js';

/** A document's place in its tenant's audit log. Hashes in the proof are standard base64, as the proof routes give them. */
export interface LogAnchor {
  /** The leaf's index: the entry's seq − 1. */
  index: number;
  /** The audit entry that records the document, whole, so that its hash (and so the leaf) is recomputed. */
  entry: AuditEntry;
  /** The C2SP signed note of a checkpoint whose tree holds the entry. */
  checkpoint: string;
  /** RFC 6962 audit path of the leaf in the checkpoint's tree, from the leaf up. */
  inclusionProof: string[];
}

/** The leaf an audit entry is: RFC 6962 leaf hash of the 32 bytes of its chain hash. */
export function auditLeaf(entry: Pick<AuditEntry, 'hash'>): Hash {
  return leafHash(fromHex(entry.hash) ?? new Uint8Array(0));
}

/** Which link of an anchor failed: scripts and tests branch on it. */
export type AnchorPart = 'anchor' | 'entry' | 'binding' | 'checkpoint' | 'proof' | 'consistency';

export type LogAnchorVerdict =
  | { ok: true; origin: string; index: number; size: number; consistentWith?: number }
  | { ok: false; part: AnchorPart; reason: string };

/** Where a verified anchor places its document, as the documents' verdicts report it. */
export interface AnchoredPlace {
  auditSeq: number;
  origin: string;
  checkpointSize: number;
  /** The size of the later checkpoint it was shown consistent with, when one was given. */
  consistentWith?: number;
}

export function placeOf(verdict: Extract<LogAnchorVerdict, { ok: true }>, anchor: LogAnchor): AnchoredPlace {
  return {
    auditSeq: anchor.entry.seq,
    origin: verdict.origin,
    checkpointSize: verdict.size,
    ...(verdict.consistentWith !== undefined ? { consistentWith: verdict.consistentWith } : {}),
  };
}

/** A later checkpoint the auditor holds, and the consistency proof (base64 hashes) between it and the anchor's. */
export interface LaterCheckpoint {
  note: string;
  /** From the smaller of the two sizes to the larger; empty when the sizes are equal. */
  consistencyProof: readonly string[];
}

export interface LogAnchorCheck {
  /** The log's verifier key, `<name>+<key id>+<key>`, pinned by the auditor (never taken from the anchor). */
  logKey: string;
  /** Why the entry does not record the document, or null when it does (the document's own check). */
  binds: (entry: AuditEntry) => string | null;
  later?: LaterCheckpoint;
}

/** The anchor of `entry` under a signed checkpoint and the inclusion proof the log gave for it. */
export function logAnchor(entry: AuditEntry, checkpoint: string, proof: readonly Hash[]): LogAnchor {
  return {
    index: entry.seq - 1,
    entry,
    checkpoint,
    inclusionProof: proof.map(toBase64),
  };
}

/**
 * Checks an anchor link by link, and names the first that fails: its shape, the entry (its hash over its content,
 * its index), what the entry records (`binds`), the checkpoint (signed by the log key, of the entry's tenant's log,
 * large enough), the inclusion proof, then consistency with a later checkpoint when one is given.
 */
export async function verifyLogAnchor(raw: unknown, check: LogAnchorCheck): Promise<LogAnchorVerdict> {
  const fail = (part: AnchorPart, reason: string) => ({ ok: false as const, part, reason });
  const malformed = describeAnchorShape(raw);
  if (malformed) return fail('anchor', `malformed anchor: ${malformed}`);
  const anchor = raw as LogAnchor;
  const { entry } = anchor;
  if (recompute(entry) !== entry.hash)
    return fail('entry', "entry changed: the audit entry's hash does not match its content");
  if (anchor.index !== entry.seq - 1)
    return fail('entry', `index ${anchor.index} is not the place of the entry of seq ${entry.seq}`);
  const unbound = check.binds(entry);
  if (unbound) return fail('binding', unbound);

  let verifier: NoteVerifier;
  try {
    verifier = noteVerifier(check.logKey);
  } catch (error) {
    return fail('checkpoint', `the log key is not a verifier key: ${(error as Error).message}`);
  }
  const opened = openCheckpoint(anchor.checkpoint, verifier.name, check.logKey);
  if (typeof opened === 'string') return fail('checkpoint', opened);
  if (opened.origin !== verifier.name)
    return fail('checkpoint', `the checkpoint names log ${opened.origin}, not ${verifier.name}`);
  if (!opened.origin.endsWith(`/${entry.tenant}`))
    return fail('checkpoint', `the checkpoint is of log ${opened.origin}, not of tenant ${entry.tenant}'s`);
  if (opened.size <= anchor.index)
    return fail('checkpoint', `the checkpoint's tree of ${opened.size} entries does not reach index ${anchor.index}`);

  const proof = anchor.inclusionProof.map(hashOf);
  if (!verifyInclusion(auditLeaf(entry), anchor.index, opened.size, proof, opened.root))
    return fail('proof', `the inclusion proof does not lead from entry ${entry.seq} to the checkpoint's root`);

  const done = { ok: true as const, origin: opened.origin, index: anchor.index, size: opened.size };
  if (!check.later) return done;
  const laterSize = checkpointSizeOf(check.later.note);
  if (laterSize === null) return fail('consistency', 'the later checkpoint is not a signed checkpoint');
  const [earlier, later] =
    laterSize >= opened.size ? [anchor.checkpoint, check.later.note] : [check.later.note, anchor.checkpoint];
  const given = check.later.consistencyProof.map(hashOf);
  const joined = await checkConsistency(earlier, later, check.logKey, () => Promise.resolve(given));
  if (!joined.ok) return fail('consistency', `against the later checkpoint: ${joined.reason}`);
  return { ...done, consistentWith: laterSize };
}

/** The opened checkpoint, or why it is not one signed by the key. */
function openCheckpoint(note: unknown, name: string, key: string): Checkpoint | string {
  if (typeof note !== 'string') return 'the checkpoint is not a signed note';
  const text = openNote(note, [noteVerifier(key)]);
  if (text === null) return `the checkpoint is not signed by ${name} (changed, or signed by another key)`;
  return parseCheckpoint(text) ?? 'the signed note is not a checkpoint';
}

/** The tree size a note's checkpoint claims (unverified: only to order two checkpoints), or null. */
export function checkpointSizeOf(note: string): number | null {
  const parsed = parseNote(note);
  return parsed ? (parseCheckpoint(parsed.text)?.size ?? null) : null;
}

function recompute(entry: AuditEntry): string | null {
  try {
    return hashEntry(entry);
  } catch {
    return null;
  }
}

/** A proof's hash; one that is not base64 is empty, which no proof accepts. */
function hashOf(hash: string): Hash {
  return fromBase64(hash) ?? new Uint8Array(0);
}

const BASE64_HASH = /^[A-Za-z0-9+/]{43}=$/;

/** Why a value is not shaped as an anchor, or null. */
function describeAnchorShape(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const a = raw as Record<string, unknown>;
  if (typeof a.index !== 'number' || !Number.isSafeInteger(a.index) || a.index < 0) return 'index must be a leaf index';
  if (typeof a.entry !== 'object' || a.entry === null || Array.isArray(a.entry)) return 'entry must be an object';
  const e = a.entry as Record<string, unknown>;
  if (typeof e.seq !== 'number' || typeof e.hash !== 'string' || typeof e.tenant !== 'string')
    return 'entry must have seq, tenant and hash';
  if (typeof e.details !== 'object' || e.details === null) return 'entry.details must be an object';
  if (typeof a.checkpoint !== 'string') return 'checkpoint must be a signed note';
  if (!Array.isArray(a.inclusionProof) || !a.inclusionProof.every((h) => typeof h === 'string' && BASE64_HASH.test(h)))
    return 'inclusionProof must be base64 SHA-256 hashes';
  return null;
}
