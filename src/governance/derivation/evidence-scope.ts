/**
 * The two evidence views of seed 002 §3.1. Citation-only: the cited events and parents. Expanded history: the
 * citations plus up to 12 more passages of the same tenant and subject retrieved by BM25 from what was written
 * before the memory, 16 in all, in time order and not marked cited or retrieved. Pure: the caller supplies the
 * pool already limited to earlier events of the subject (earlier memories are never in it: derived from the
 * same history, they are not independent evidence).
 */
import { rankBm25, type StemCache } from './bm25.js';
import type { EvidencePassage } from './verifier.port.js';

export const RETRIEVED_PASSAGES = 12;
export const TOTAL_PASSAGES = 16;
/**
 * The most text one view holds, in UTF-8 bytes, unless configured (`LETHE_DERIVATION_AUDIT_MAX_BYTES`): judging
 * costs obligations × evidence sentences, so the budget is counted in bytes, not passages. Retrieved passages that
 * do not fit are left out (and may make a label unresolved); citations that do not fit make the whole audit
 * unresolved (`derivation-audit.ts`).
 */
export const MAX_EVIDENCE_BYTES = 128 * 1024;

export const bytesOf = (passages: readonly EvidencePassage[]) =>
  passages.reduce((n, p) => n + Buffer.byteLength(p.text, 'utf8'), 0);

export interface EvidenceViews {
  citationOnly: EvidencePassage[];
  expanded: EvidencePassage[];
  /** Pool passages that matched the memory but did not fit the budget: they may bear on an unsupported obligation. */
  leftOut: EvidencePassage[];
}

const byTime = (a: EvidencePassage, b: EvidencePassage) => a.at.getTime() - b.at.getTime() || a.id.localeCompare(b.id);

export function evidenceViews(
  content: string,
  cited: readonly EvidencePassage[],
  pool: readonly EvidencePassage[],
  before: Date,
  stems?: StemCache,
  maxBytes = MAX_EVIDENCE_BYTES,
): EvidenceViews {
  const citedIds = new Set(cited.map((c) => c.id));
  const candidates = pool.filter((p) => !citedIds.has(p.id) && p.at.getTime() <= before.getTime());
  const ranked = rankBm25(content, candidates, stems).map((s) => s.item);
  const room = Math.max(0, Math.min(RETRIEVED_PASSAGES, TOTAL_PASSAGES - cited.length));
  const retrieved: EvidencePassage[] = [];
  const leftOut: EvidencePassage[] = [];
  let bytes = bytesOf(cited);
  for (const passage of ranked) {
    const size = Buffer.byteLength(passage.text, 'utf8');
    if (retrieved.length < room && bytes + size <= maxBytes) {
      retrieved.push(passage);
      bytes += size;
    } else leftOut.push(passage);
  }
  return {
    citationOnly: [...cited].sort(byTime),
    expanded: [...cited, ...retrieved].sort(byTime),
    leftOut,
  };
}
