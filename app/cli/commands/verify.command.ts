import fs from 'node:fs';
import readline from 'node:readline';
import type { Command } from 'commander';
import {
  verifyCertificatesJsonlStream,
  type CertificateBreak,
  type CertificateVerification,
} from '../../../src/governance/certificates/certificate-verify.js';
import { parsePublicKeyPem } from '../../../src/governance/certificates/signing.js';
import type { KeyObject } from 'node:crypto';
import { isAccessPackage, verifyAccessPackage } from '../../../src/governance/rights/access-request.js';
import { isRightsReceipt, verifyReceipt, type RightsReceipt } from '../../../src/governance/rights/receipt.js';
import { verifyAuditJsonl } from '../../../src/governance/audit/audit-export.js';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';
import { CliError, ExitCode } from '../exit-codes.js';
import { periodOptions } from './certificates.command.js';
import type { CliContext } from '../context.js';
import { verifyAnchoredFile } from './verify-anchored.js';
import { witnessPolicy, withWitnessOptions } from '../witness-options.js';

interface VerifyOptions {
  publicKey: string[];
  audit?: string;
  from?: string;
  to?: string;
  tenant?: string;
  allowEmpty?: boolean;
  logKey?: string;
  checkpoint?: string;
  consistencyProof?: string;
  fetchProof?: boolean;
  receipt?: string;
  witnessKey: string[];
  minCosignatures?: string;
}

/**
 * `lethe verify <certs.jsonl> --public-key key.pem [--audit audit.jsonl]`: offline, no server; or
 * `lethe verify <anchored.json> --public-key key.pem --log-key KEY [--checkpoint FILE]`: one certificate against its
 * place in the audit log. The API is reached only for `--fetch-proof`.
 */
export function registerVerifyCommand(program: Command, context?: () => CliContext): void {
  const verify = program
    .command('verify <certificates>')
    .description(
      'verify exported certificates offline: hashes, Ed25519 signatures, chain continuity, no gaps, and with --audit ' +
        'their anchors in an audit export (exit 7 naming the first bad entry); or an access package: its signature',
    )
    .option(
      '--public-key <file>',
      'Ed25519 public key (PEM); repeat for certificates signed before a key rotation',
      collect,
      [],
    )
    .option(
      '--audit <file>',
      'an audit export (lethe audit export) of the same tenant, from seq 1: checks anchors and inclusion',
    )
    .option('--from <date>', 'the period the export covers starts here (lets it start after the first certificate)')
    .option('--to <date>', 'the period ends here (with --audit: every certificate anchored up to it must be present)')
    .option('--allow-empty', 'an export without certificates passes (otherwise it fails: an empty file proves nothing)')
    .option(
      '--log-key <verifier-key>',
      "the audit log's verifier key (<name>+<key id>+<key>): checks an anchored certificate against its checkpoint, without the chain",
    )
    .option(
      '--checkpoint <file>',
      'with --log-key: a later checkpoint you kept (lethe audit checkpoint) it must be consistent with',
    )
    .option(
      '--consistency-proof <file>',
      'with --checkpoint: the consistency proof between the two (JSON, as the API gives it)',
    )
    .option('--fetch-proof', 'with --checkpoint: ask the API for the consistency proof')
    .option('--receipt <file>', "with --log-key, for an access package: its request's anchored receipt");
  withWitnessOptions(verify, "the checkpoint trusted (--checkpoint if given, else the anchor's)").action(
    async (file: string, options: VerifyOptions) => {
      if (options.publicKey.length === 0)
        throw new CliError('--public-key: required (lethe certificates public-key prints it)', ExitCode.usage);
      if (
        options.logKey === undefined &&
        (options.checkpoint ??
          options.consistencyProof ??
          options.fetchProof ??
          options.receipt ??
          (options.witnessKey.length > 0 || options.minCosignatures !== undefined ? true : undefined))
      )
        throw new CliError(
          '--checkpoint, --consistency-proof, --fetch-proof, --receipt, --witness-key, --min-cosignatures: only with --log-key',
          ExitCode.usage,
        );
      if (options.logKey !== undefined) {
        if (file === '-' || !fs.existsSync(file)) throw new CliError(`file: no such file ${file}`, ExitCode.usage);
        const json = (program.opts() as { json?: boolean }).json ?? false;
        const publicKeys = options.publicKey.map((keyFile) => readPublicKey(keyFile));
        await verifyAnchoredFile(
          file,
          publicKeys,
          { ...options, logKey: options.logKey, witnesses: witnessPolicy(options) },
          {
            json,
            ...(context ? { context } : {}),
          },
        );
        return;
      }
      const period = periodOptions(options);
      const publicKeys = options.publicKey.map((keyFile) => readPublicKey(keyFile));
      if (file !== '-' && !fs.existsSync(file))
        throw new CliError(`certificates: no such file ${file}`, ExitCode.usage);
      if (options.audit !== undefined && !fs.existsSync(options.audit)) {
        throw new CliError(`--audit: no such file ${options.audit}`, ExitCode.usage);
      }
      const asJson = (program.opts() as { json?: boolean }).json;
      const document = file === '-' ? null : signedDocumentIn(file);
      if (document !== null) {
        const keys = publicKeys.map((pem) => parsePublicKeyPem(pem));
        const verdict =
          document.kind === 'package'
            ? verifyAccessPackage(document.value, keys)
            : await verifyReceiptFile(document.value, keys, options.audit);
        if (asJson) process.stdout.write(`${JSON.stringify(verdict)}\n`);
        else if (!verdict.ok) process.stdout.write(`FAILED: ${verdict.reason}\n`);
        else if (document.kind === 'package')
          process.stdout.write(
            `ok: access package ${(document.value as { requestId?: string }).requestId ?? '?'} (${'records' in verdict ? verdict.records : '?'} records), signature valid (key ${verdict.keyId})\n`,
          );
        else {
          const receipt = document.value as RightsReceipt;
          process.stdout.write(
            `ok: ${receipt.right} receipt ${receipt.requestId} (${receipt.state}), signature valid (key ${verdict.keyId})` +
              `${options.audit ? `; anchored at audit seq ${receipt.anchor.auditSeq} of an intact chain` : '; anchor not checked (no --audit)'}\n`,
          );
        }
        if (!verdict.ok) process.exitCode = ExitCode.verificationFailed;
        return;
      }
      const certificates = lines(() => (file === '-' ? process.stdin : fs.createReadStream(file, 'utf8')));
      const auditFile = options.audit;
      const audit = auditFile !== undefined ? lines(() => fs.createReadStream(auditFile, 'utf8')) : undefined;
      const { tenant, json } = program.opts() as { tenant?: string; json?: boolean };
      const result = await verifyCertificatesJsonlStream(
        { certificates, ...(audit ? { audit } : {}) },
        { publicKeys, ...period, ...(tenant ? { tenant } : {}) },
      );
      // An auditor handed an empty or truncated-to-nothing export must not read "ok" into it.
      const empty = result.ok && result.count === 0 && !options.allowEmpty;
      if (json)
        process.stdout.write(
          `${JSON.stringify(empty ? { ...result, ok: false, reason: 'no certificates' } : result)}\n`,
        );
      else if (empty) process.stdout.write('FAILED: the export holds no certificates (--allow-empty accepts that)\n');
      else process.stdout.write(`${result.ok ? summary(result) : failure(result.firstBad)}\n`);
      if (!result.ok || empty) process.exitCode = ExitCode.verificationFailed;
    },
  );
}

function summary(r: Extract<CertificateVerification, { ok: true }>): string {
  const range = r.count === 0 ? 'none' : `seq ${r.firstSeq}–${r.lastSeq}`;
  const parts = [
    `ok: ${r.count} certificate${r.count === 1 ? '' : 's'} (${range})${r.tenant ? ` of tenant ${r.tenant}` : ''}`,
    `signatures valid (key ${r.keyIds.join(', ') || '-'})`,
    `chain intact, head ${r.headHash}`,
  ];
  if (r.anchored !== null)
    parts.push(`all ${r.anchored} anchored in an intact audit chain of ${r.auditEntries} entries`);
  else
    parts.push(
      `anchors${r.firstSeq !== null && r.firstSeq > 1 ? ', the first link' : ''} and inclusion not checked (no --audit)`,
    );
  return parts.join('; ');
}

function failure(bad: CertificateBreak): string {
  const where = bad.source === 'audit' ? `in the audit export at line ${bad.line}` : `at line ${bad.line}`;
  const what = [
    bad.certificateId ? `certificate ${bad.certificateId}` : null,
    bad.seq !== null ? `seq ${bad.seq}` : null,
  ]
    .filter(Boolean)
    .join(', ');
  return `FAILED ${where}${what ? ` (${what})` : ''}: ${bad.reason}`;
}

/**
 * An access package or a rights receipt is one JSON object naming its kind; the certificates' export (one entry per
 * line, possibly gigabytes) never names it. Only the file's head is read to tell them apart, and the whole file only
 * for a signed document.
 */
function signedDocumentIn(file: string): { kind: 'package' | 'receipt'; value: unknown } | null {
  const DOCUMENT_MAX_BYTES = 512 * 1024 * 1024;
  const HEAD_BYTES = 64 * 1024;
  if (fs.statSync(file).size > DOCUMENT_MAX_BYTES) return null;
  const head = Buffer.alloc(HEAD_BYTES);
  const fd = fs.openSync(file, 'r');
  let read: number;
  try {
    read = fs.readSync(fd, head, 0, HEAD_BYTES, 0);
  } finally {
    fs.closeSync(fd);
  }
  const start = head.subarray(0, read).toString('utf8');
  const kind = /"kind"\s*:\s*"lethe\.(access-package|rights-receipt)"/.exec(start)?.[1];
  if (!start.trimStart().startsWith('{') || !kind) return null;
  try {
    const value: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (isAccessPackage(value)) return { kind: 'package', value };
    if (isRightsReceipt(value)) return { kind: 'receipt', value };
    return null;
  } catch {
    return null;
  }
}

/** A receipt's signature, and with an audit export, that the export is an intact chain holding its anchor. */
async function verifyReceiptFile(value: unknown, keys: KeyObject[], auditFile: string | undefined) {
  if (auditFile === undefined) return verifyReceipt(value, keys);
  const text = fs.readFileSync(auditFile, 'utf8');
  const chain = verifyAuditJsonl(text);
  if (!chain.ok)
    return {
      ok: false as const,
      reason: `the audit export is not an intact chain at seq ${chain.firstBad.seq}: ${chain.firstBad.reason}`,
    };
  const entries = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AuditEntry);
  return verifyReceipt(value, keys, entries);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The PEM text of an Ed25519 public key file; anything else is a usage error naming the file. */
function readPublicKey(file: string): string {
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(`--public-key: cannot read ${file}`, ExitCode.usage);
  }
  try {
    parsePublicKeyPem(pem);
  } catch (error) {
    throw new CliError(`--public-key: ${file}: ${(error as Error).message}`, ExitCode.usage);
  }
  return pem;
}

/**
 * Lines of a stream opened on first read: the certificates are read only after the audit export, and a readline
 * interface started early would drop the lines it emits before anyone iterates.
 */
async function* lines(open: () => NodeJS.ReadableStream): AsyncIterable<string> {
  yield* readline.createInterface({ input: open(), crlfDelay: Infinity });
}
