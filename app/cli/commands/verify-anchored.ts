/**
 * `lethe verify <file> --log-key KEY`: one signed document (an anchored certificate or receipt, or an access package
 * with its request's anchored receipt) checked against its place in the audit log, without the chain. The log key is the auditor's, pinned from a channel they trust (`lethe audit checkpoint --json` shows it);
 * with `--checkpoint`, a checkpoint they kept of the same log, the anchor's checkpoint must also be consistent with
 * it, by a proof read from `--consistency-proof` (offline) or asked of the API (`--fetch-proof`).
 */
import fs from 'node:fs';
import { checkpointSizeOf, type LaterCheckpoint } from '../../../src/governance/audit/log-tree/log-anchor.js';
import { noteVerifier } from '../../../src/governance/audit/log-tree/signed-note.js';
import type { WitnessPolicy } from '../../../src/governance/audit/log-tree/consistency-check.js';
import { cosignatureVerifier, cosignedBy } from '../../../src/governance/audit/witness/cosignature.js';
import {
  isAnchoredCertificate,
  verifyAnchoredCertificate,
  type AnchoredVerdict,
} from '../../../src/governance/certificates/anchored-certificate.js';
import { parsePublicKeyPem } from '../../../src/governance/certificates/signing.js';
import { isAccessPackage } from '../../../src/governance/rights/access-request.js';
import {
  isAnchoredReceipt,
  verifyAnchoredReceipt,
  type AnchoredReceiptVerdict,
} from '../../../src/governance/rights/anchored-receipt.js';
import type { ConsistencyProofView } from '../../../src/shared/api-contract/audit.js';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';

export interface AnchoredOptions {
  logKey: string;
  checkpoint?: string;
  consistencyProof?: string;
  fetchProof?: boolean;
  /** For an access package: its request's anchored receipt. */
  receipt?: string;
  /** Witnesses that must have cosigned the checkpoint trusted: the later one when given, else the anchor's. */
  witnesses?: WitnessPolicy | undefined;
}

/** Verifies the file's anchored document; prints the verdict and sets exit 7 when it fails. */
export async function verifyAnchoredFile(
  file: string,
  publicKeys: string[],
  options: AnchoredOptions,
  out: { json: boolean; context?: () => CliContext },
): Promise<void> {
  try {
    noteVerifier(options.logKey);
  } catch (error) {
    throw new CliError(`--log-key: ${(error as Error).message}`, ExitCode.usage);
  }
  const value = readJson(file, 'file');
  const accessPackage = isAccessPackage(value) ? value : undefined;
  if (accessPackage !== undefined && options.receipt === undefined)
    throw new CliError(
      "--receipt: required for an access package (its request's anchored receipt: lethe rights receipt <id> --anchored)",
      ExitCode.usage,
    );
  const anchored = accessPackage !== undefined ? readJson(options.receipt!, '--receipt') : value;
  if (!isAnchoredCertificate(anchored) && !isAnchoredReceipt(anchored))
    throw new CliError(
      `--log-key: ${accessPackage !== undefined ? options.receipt : file} is not an anchored certificate or receipt ` +
        '(lethe certificates get <id> --anchored, lethe rights receipt <id> --anchored write them)',
      ExitCode.usage,
    );
  const later =
    options.checkpoint !== undefined ? await laterCheckpoint(anchored.logAnchor.checkpoint, options, out) : null;
  const check = { logKey: options.logKey, ...(later ? { later } : {}) };
  const verdict = isAnchoredCertificate(anchored)
    ? await verifyAnchoredCertificate(anchored, { ...check, publicKeys })
    : await verifyAnchoredReceipt(anchored, {
        ...check,
        publicKeys: publicKeys.map((pem) => parsePublicKeyPem(pem)),
        ...(accessPackage !== undefined ? { accessPackage } : {}),
      });
  const witnessed =
    verdict.ok && options.witnesses
      ? cosignedEnough(later?.note ?? anchored.logAnchor.checkpoint, options.witnesses, later !== null)
      : null;
  const final = witnessed ?? verdict;
  process.stdout.write(out.json ? `${JSON.stringify(final)}\n` : `${describe(final)}\n`);
  if (!final.ok) process.exitCode = ExitCode.verificationFailed;
}

interface CosignatureFailure {
  ok: false;
  part: 'cosignature';
  reason: string;
}

/**
 * A failed verdict when fewer than `min` of the trusted witnesses validly cosigned the checkpoint, else null. A witness
 * cosigns only a tree that extends every tree of the log it saw: a certificate proven under a checkpoint no trusted
 * witness cosigned may sit on a history shown to this auditor alone.
 */
function cosignedEnough(note: string, policy: WitnessPolicy, given: boolean): CosignatureFailure | null {
  const cosigned = cosignedBy(note, policy.keys.map(cosignatureVerifier)).length;
  if (cosigned >= policy.min) return null;
  return {
    ok: false as const,
    part: 'cosignature' as const,
    reason:
      `the ${given ? 'given' : "anchor's"} checkpoint is cosigned by ${cosigned} of the witnesses given, fewer than ` +
      `${policy.min}${given ? '' : ' (give a later, cosigned checkpoint with --checkpoint)'}`,
  };
}

function describe(v: AnchoredVerdict | AnchoredReceiptVerdict | CosignatureFailure): string {
  if (!v.ok) return `FAILED (${v.part}): ${v.reason}`;
  const what =
    'certificateId' in v
      ? `certificate ${v.certificateId}`
      : `${v.packageSha256 ? 'access package and its ' : ''}${v.right} receipt ${v.requestId}`;
  return (
    `ok: ${what} of tenant ${v.tenant}, signature valid (key ${v.keyId}); ` +
    `recorded at audit seq ${v.auditSeq}, included in the checkpoint of ${v.checkpointSize} entries of ${v.origin}` +
    (v.consistentWith !== undefined
      ? `, consistent with the given checkpoint of ${v.consistentWith}`
      : '; no later checkpoint given')
  );
}

async function laterCheckpoint(
  anchorNote: string,
  options: AnchoredOptions,
  out: { context?: () => CliContext },
): Promise<LaterCheckpoint> {
  const text = readText(options.checkpoint!, '--checkpoint');
  // `lethe audit checkpoint` prints the note; with --json, a view holding it.
  const note = text.trimStart().startsWith('{')
    ? String((parseJson(text, '--checkpoint') as { note?: unknown }).note)
    : text;
  const [from, to] = [checkpointSizeOf(anchorNote), checkpointSizeOf(note)];
  if (to === null) throw new CliError(`--checkpoint: ${options.checkpoint} is not a signed checkpoint`, ExitCode.usage);
  if (from === null || from === to) return { note, consistencyProof: [] };
  if (options.consistencyProof !== undefined) {
    const proof = parseJson(readText(options.consistencyProof, '--consistency-proof'), '--consistency-proof');
    const hashes = Array.isArray(proof) ? proof : (proof as Partial<ConsistencyProofView>).proof;
    if (!Array.isArray(hashes) || !hashes.every((h) => typeof h === 'string'))
      throw new CliError('--consistency-proof: a JSON array of base64 hashes, or {"proof": [...]}', ExitCode.usage);
    return { note, consistencyProof: hashes };
  }
  if (options.fetchProof && out.context) {
    const ctx = out.context();
    const [small, large] = from < to ? [from, to] : [to, from];
    const view = await ctx.api.get<ConsistencyProofView>(
      `/v1/tenants/${ctx.tenant}/audit/proofs/consistency?from=${small}&to=${large}`,
    );
    return { note, consistencyProof: view.proof };
  }
  throw new CliError(
    `--consistency-proof: required, the anchor's checkpoint (${from}) and the given one (${to}) differ in size ` +
      '(or --fetch-proof to ask the API for it)',
    ExitCode.usage,
  );
}

function readText(file: string, name: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(`${name}: cannot read ${file}`, ExitCode.usage);
  }
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`${name}: not JSON`, ExitCode.usage);
  }
}

function readJson(file: string, name: string): unknown {
  return parseJson(readText(file, name), name);
}
