/**
 * The auditor's file format: JSON Lines, one RFC 8785 canonical entry per line, in chain order. Verifying it
 * needs no server — only this module and the chain rules.
 */
import { canonicalJson } from '../../shared/canonical-json.js';
import { createChainVerifier, type ChainVerification, type ChainVerifier, type VerifyOptions } from './audit-chain.js';
import type { AuditLog } from './audit-log.port.js';

/** A seq range, inclusive at both ends. */
export interface SeqRange {
  fromSeq?: number;
  toSeq?: number;
}

/** Streams a tenant's entries as JSONL: each yielded string is one canonical entry followed by `\n`. */
export async function* exportAuditJsonl(log: AuditLog, tenant: string, range: SeqRange = {}): AsyncIterable<string> {
  for await (const entry of log.entries(tenant, range)) yield `${canonicalJson(entry)}\n`;
}

/**
 * Verifies JSONL text (or its lines) offline. Blank lines are skipped; `index` in a failure is the entry's
 * position among the non-blank lines (= its line number − 1 in an export). Pass `expectFromSeq` for a range
 * that does not start at seq 1.
 */
export function verifyAuditJsonl(input: string | Iterable<string>, opts: VerifyOptions = {}): ChainVerification {
  const verifier = createChainVerifier(opts);
  const lines = typeof input === 'string' ? input.split('\n') : input;
  for (const line of lines) if (!pushLine(verifier, line)) break;
  return verifier.result();
}

/** As `verifyAuditJsonl`, over a stream of lines (e.g. `readline` over a file), in constant memory. */
export async function verifyAuditJsonlStream(
  lines: AsyncIterable<string>,
  opts: VerifyOptions = {},
): Promise<ChainVerification> {
  const verifier = createChainVerifier(opts);
  for await (const line of lines) if (!pushLine(verifier, line)) break;
  return verifier.result();
}

/** False once the chain is broken. */
function pushLine(verifier: ChainVerifier, line: string): boolean {
  if (line.trim() === '') return true;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    // The parser's message may quote the line's content; say only that it is not JSON.
    verifier.pushUnreadable('not valid JSON');
    return false;
  }
  return verifier.push(parsed);
}
