/**
 * The write-time derivation audit of one memory: decompose it, judge its obligations in both evidence views,
 * and combine. Pure apart from the verifier it is given. The verdict holds ids, labels and counts only.
 */
import { anchorsOf, decompose, type Obligation, type ObligationKind } from './obligations.js';
import { admissionLabel, combineLabels, type ObligationLabel, type RecordLabel } from './labels.js';
import { bytesOf, evidenceViews, MAX_EVIDENCE_BYTES } from './evidence-scope.js';
import { stemsOf, type StemCache } from './bm25.js';
import {
  VerifierDeadlineExceeded,
  type DerivationVerifier,
  type EvidencePassage,
  type ObligationVerdict,
} from './verifier.port.js';
import type { RelationKind } from './text-cues.js';
import type { ObligationPlace } from '../../substrate/model/records.js';

/** Why a label is unresolved, when it is. */
export type UnresolvedCause =
  'retrieval-budget' | 'timeout' | 'verifier-error' | 'obligation-budget' | 'evidence-budget';

/**
 * The most obligations one memory is judged on. Judging costs obligations × evidence sentences: a memory is a fact
 * or a summary, and one written as thousands of clauses would hold the worker for minutes. Past the budget the
 * memory is unresolved, and a reviewer decides on it as written.
 */
export const MAX_OBLIGATIONS = 64;

/**
 * One obligation as a verdict shows it: no text. Its place in the memory is kept, so that a reviewer is shown
 * what it is about without decomposing the memory again: a claim's span in the content, the claim a qualifier
 * qualifies, the two claims a relation joins.
 */
export interface ObligationOutcome extends ObligationPlace {
  id: string;
  kind: ObligationKind;
  relation?: RelationKind;
  label: ObligationLabel;
  evidenceIds: string[];
}

/** Where an obligation is in the memory: offsets and ids only. */
function placeOf(o: Obligation): Pick<ObligationOutcome, 'relation' | 'span' | 'of' | 'between'> {
  if (o.kind === 'claim') return { span: o.span };
  if (o.kind === 'relation') return { relation: o.relation, between: o.between };
  return { of: o.claim };
}

/** What the audit concluded about a memory; kept on the record and shown to reviewers. */
export interface DerivationVerdict {
  verifier: { id: string; version: string };
  label: RecordLabel;
  citationOnly: Exclude<RecordLabel, 'repaired'>;
  expanded: Exclude<RecordLabel, 'repaired'>;
  obligations: ObligationOutcome[];
  /** Retrieved passages the supported obligations rest on, beyond the citations (set when repaired). */
  repairedEvidenceIds: string[];
  /** Ids of every passage in the expanded view, in time order. */
  evidenceIds: string[];
  counts: { cited: number; retrieved: number; leftOut: number; obligations: number };
  unresolvedBecause?: UnresolvedCause;
}

export interface AuditInput {
  content: string;
  cited: EvidencePassage[];
  /** Earlier events of the memory's subjects (any time: the view keeps only those at or before `before`). */
  pool: EvidencePassage[];
  /** The memory's derivation time: later interactions are not evidence. */
  before: Date;
  /** The history held more candidates than were read: any gap may be a retrieval limit. */
  poolTruncated?: boolean;
  /** The batch's evidence budget had no room left for these citations: the audit does not judge on part of them. */
  overBatchBudget?: boolean;
}

export interface AuditOptions {
  verifier: DerivationVerifier;
  timeoutMs: number;
  /** Stems of passages already tokenised by this batch (see `StemCache`). */
  stems?: StemCache;
  /** The most evidence the audit reads, in UTF-8 bytes (`MAX_EVIDENCE_BYTES` unless configured). */
  maxEvidenceBytes?: number;
}

class VerifierTimeout extends Error {}

/** Runs the verifier within the timeout; a timeout or a failure is reported, never turned into a label here. */
async function bounded(
  options: AuditOptions,
  content: string,
  obligations: Obligation[],
  evidence: EvidencePassage[],
): Promise<ObligationVerdict[] | UnresolvedCause> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new VerifierTimeout());
    }, options.timeoutMs);
  });
  try {
    const verdicts = await Promise.race([
      options.verifier.verify(content, obligations, evidence, controller.signal),
      timeout,
    ]);
    // A verifier that answers for other obligations than asked has failed, whatever it says.
    const ids = obligations.map((o) => o.id);
    if (verdicts.length !== ids.length || verdicts.some((v, i) => v.obligationId !== ids[i])) return 'verifier-error';
    const known = new Set(evidence.map((e) => e.id));
    return verdicts.map((v) => ({ ...v, evidenceIds: v.evidenceIds.filter((id) => known.has(id)) }));
  } catch (error) {
    // A verifier stopped at its CPU deadline did not answer in time, as one that outlived the timeout.
    return error instanceof VerifierTimeout || error instanceof VerifierDeadlineExceeded ? 'timeout' : 'verifier-error';
  } finally {
    clearTimeout(timer);
  }
}

/** A left-out passage bears on an obligation when it mentions at least half of the obligation's anchor words. */
function bearsOn(anchors: string[], passage: EvidencePassage, cache?: StemCache): boolean {
  if (anchors.length === 0) return false;
  const stems = stemsOf(passage, cache);
  return anchors.filter((a) => stems.has(a)).length >= Math.ceil(anchors.length / 2);
}

function outcomes(obligations: Obligation[], verdicts: ObligationVerdict[]): ObligationOutcome[] {
  return obligations.map((o, i) => ({
    id: o.id,
    kind: o.kind,
    ...placeOf(o),
    label: verdicts[i]!.label,
    evidenceIds: verdicts[i]!.evidenceIds,
  }));
}

export async function auditDerivation(input: AuditInput, options: AuditOptions): Promise<DerivationVerdict> {
  const obligations = decompose(input.content);
  const maxBytes = options.maxEvidenceBytes ?? MAX_EVIDENCE_BYTES;
  const views = evidenceViews(input.content, input.cited, input.pool, input.before, options.stems, maxBytes);
  const base = {
    verifier: { id: options.verifier.id, version: options.verifier.version },
    evidenceIds: views.expanded.map((p) => p.id),
    counts: {
      cited: views.citationOnly.length,
      retrieved: views.expanded.length - views.citationOnly.length,
      leftOut: views.leftOut.length,
      obligations: obligations.length,
    },
  };
  const unresolved = (cause: UnresolvedCause): DerivationVerdict => ({
    ...base,
    label: 'unresolved',
    citationOnly: 'unresolved',
    expanded: 'unresolved',
    obligations: obligations.map((o) => ({
      id: o.id,
      kind: o.kind,
      ...placeOf(o),
      label: 'unresolved',
      evidenceIds: [],
    })),
    repairedEvidenceIds: [],
    unresolvedBecause: cause,
  });
  if (obligations.length > MAX_OBLIGATIONS) return { ...unresolved('obligation-budget'), obligations: [] };
  // Citations beyond the byte budget cannot all be read: the audit does not judge on part of them.
  if (input.overBatchBudget || bytesOf(views.citationOnly) > maxBytes) return unresolved('evidence-budget');
  const [citedVerdicts, expandedVerdicts] = await Promise.all([
    bounded(options, input.content, obligations, views.citationOnly),
    bounded(options, input.content, obligations, views.expanded),
  ]);
  if (typeof expandedVerdicts === 'string') return unresolved(expandedVerdicts);
  if (typeof citedVerdicts === 'string') return unresolved(citedVerdicts);
  // An obligation the searched history does not support is unresolved, not unsupported, when passages the
  // budget left out (or a pool cut short) might hold its support (seed 002 §3.1).
  let budgetLimited = false;
  const expanded = expandedVerdicts.map((v, i): ObligationVerdict => {
    if (v.label !== 'insufficient') return v;
    const anchors = anchorsOf(obligations, obligations[i]!);
    if (input.poolTruncated || views.leftOut.some((p) => bearsOn(anchors, p, options.stems))) {
      budgetLimited = true;
      return { ...v, label: 'unresolved' };
    }
    return v;
  });
  const citationOnly = combineLabels(citedVerdicts.map((v) => v.label));
  const expandedLabel = combineLabels(expanded.map((v) => v.label));
  const label = admissionLabel(citationOnly, expandedLabel);
  const citedIds = new Set(views.citationOnly.map((p) => p.id));
  const repairedEvidenceIds =
    label === 'repaired'
      ? [...new Set(expanded.flatMap((v) => v.evidenceIds).filter((id) => !citedIds.has(id)))].sort()
      : [];
  return {
    ...base,
    label,
    citationOnly,
    expanded: expandedLabel,
    obligations: outcomes(obligations, expanded),
    repairedEvidenceIds,
    ...(label === 'unresolved' && budgetLimited ? { unresolvedBecause: 'retrieval-budget' as const } : {}),
  };
}
