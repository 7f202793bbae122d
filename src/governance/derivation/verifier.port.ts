import type { Obligation } from './obligations.js';
import type { ObligationLabel } from './labels.js';

/** One passage of evidence: an event or a cited parent memory. Its text never leaves the audit activity. */
export interface EvidencePassage {
  id: string;
  text: string;
  at: Date;
}

/** A verifier's judgement of one obligation: ids and a label only. */
export interface ObligationVerdict {
  obligationId: string;
  label: ObligationLabel;
  /** Passages the label rests on (those that support, contradict or raise the doubt). */
  evidenceIds: string[];
}

/** Checks obligations against evidence (seed 002's V_θ). Implementations: deterministic, OpenAI-compatible. */
export interface DerivationVerifier {
  /** Recorded with every verdict, so that a verdict can be traced to what produced it. */
  readonly id: string;
  readonly version: string;
  /**
   * One verdict per obligation, in the obligations' order. `content` is the whole memory, for verifiers that
   * judge it in context. May reject or never settle: the audit bounds it with a timeout.
   */
  verify(
    content: string,
    obligations: readonly Obligation[],
    evidence: readonly EvidencePassage[],
    signal: AbortSignal,
  ): Promise<ObligationVerdict[]>;
}

/** A verifier stopped at its CPU deadline: the audit reads it as a timeout, never as a verdict. */
export class VerifierDeadlineExceeded extends Error {
  constructor(readonly deadlineMs: number) {
    super(`verifier stopped at its deadline of ${deadlineMs} ms`);
    this.name = 'VerifierDeadlineExceeded';
  }
}
