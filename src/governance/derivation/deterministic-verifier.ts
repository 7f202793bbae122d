/**
 * The default verifier: no model, runs anywhere. Entities, numbers, dates, negation and relation cues of each
 * obligation must be grounded in the evidence; a relation's two ends must be linked in one passage that also
 * states a cue of the relation's family. What it cannot see (paraphrase without shared words, a cue word used in
 * another sense, the direction of a relation) is listed in docs/rules.md.
 */
import {
  contentStems,
  deniesRelation,
  entityStems,
  isNegated,
  modalityOf,
  quantityMentions,
  relationFamilies,
  STATE_CHANGE,
  timeMentions,
  type Modality,
} from './text-cues.js';
import { claimOf, type ClaimObligation, type Obligation } from './obligations.js';
import type { DerivationVerifier, EvidencePassage, ObligationVerdict } from './verifier.port.js';
import type { ObligationLabel } from './labels.js';

export const DETERMINISTIC_VERIFIER_ID = 'lethe-deterministic';
export const DETERMINISTIC_VERIFIER_VERSION = '1';

/** Share of a claim's content words one passage must contain to support it. */
const SUPPORT_COVERAGE = 2 / 3;

/** A passage split into sentences with their stems, computed once per audit. */
interface Prepared {
  id: string;
  sentences: { text: string; stems: Set<string>; entities: Set<string> }[];
}

function prepare(evidence: readonly EvidencePassage[]): Prepared[] {
  return evidence.map((p) => ({
    id: p.id,
    sentences: p.text
      .split(/(?<=[.!?;])\s+/)
      .filter((s) => s.trim().length > 0)
      .map((text) => ({ text, stems: new Set(contentStems(text)), entities: new Set(entityStems(text)) })),
  }));
}

function needed(n: number): number {
  return Math.max(1, Math.ceil(n * SUPPORT_COVERAGE));
}

/** A sentence states the claim's proposition (all its entities, enough of its words), whatever its polarity. */
function mentions(claim: ClaimObligation, s: Prepared['sentences'][number]): boolean {
  const has = (t: string) => s.stems.has(t) || s.entities.has(t);
  if (!claim.entities.every(has)) return false;
  return claim.terms.filter(has).length >= needed(claim.terms.length);
}

/** A hedge or plan does not support a plain assertion, nor does a completed fact support a plan (seed 002 App. A). */
function modalityFits(claim: Modality, passage: Modality): boolean {
  if (claim === 'asserted') return passage === 'asserted';
  if (claim === 'planned') return passage === 'planned';
  return true; // a hedged claim is weaker than whatever the passage asserts or plans
}

/**
 * Whether a sentence denies the claim: a negation in a clause of the sentence that speaks of the claim ("prefers
 * e-mail, never phone" does not deny "prefers e-mail"). Clauses split at punctuation and conjunctions.
 */
function negatedAbout(claim: ClaimObligation, sentence: string): boolean {
  const own = new Set([...claim.terms, ...claim.entities]);
  return sentence
    .split(/[,;:]|\s(?:but|and|because|although|while|whereas)\s/i)
    .some((clause) => isNegated(clause) && contentStems(clause).some((t) => own.has(t)));
}

interface ClaimFinding {
  label: ObligationLabel;
  evidenceIds: string[];
  /** Sentences that state the claim with the right polarity and modality. */
  supporting: { id: string; text: string }[];
}

function checkClaim(claim: ClaimObligation, passages: Prepared[]): ClaimFinding {
  const supporting: { id: string; text: string }[] = [];
  const opposing: { id: string; text: string; change: boolean }[] = [];
  for (const p of passages) {
    for (const s of p.sentences) {
      if (!mentions(claim, s)) continue;
      // A sentence that denies a relation ("did not move because of X") negates the link, not its ends.
      const negated = deniesRelation(s.text) ? claim.negated : negatedAbout(claim, s.text);
      if (negated !== claim.negated) {
        // A hedged or planned opposite ("might not") does not contradict an assertion.
        if (modalityOf(s.text) === 'asserted')
          opposing.push({ id: p.id, text: s.text, change: STATE_CHANGE.test(s.text.toLowerCase()) });
        continue;
      }
      if (modalityFits(claim.modality, modalityOf(s.text))) supporting.push({ id: p.id, text: s.text });
    }
  }
  const ids = (xs: { id: string }[]) => [...new Set(xs.map((x) => x.id))];
  if (supporting.length > 0 && opposing.length > 0)
    return { label: 'ambiguous', evidenceIds: ids([...supporting, ...opposing]), supporting };
  if (opposing.length > 0) return { label: 'contradicted', evidenceIds: ids(opposing), supporting };
  if (supporting.length > 0) return { label: 'supported', evidenceIds: ids(supporting), supporting };
  // A hedge or plan where the claim asserts (or the reverse) is a gap, not a contradiction.
  return { label: 'insufficient', evidenceIds: [], supporting };
}

/** A qualifier holds when a sentence supporting its claim carries it; a different value of its kind there contradicts it. */
function checkQualifier(
  o: Obligation & { kind: 'time' | 'quantity' | 'negation' | 'uncertainty' },
  claim: ClaimFinding,
): ObligationVerdict {
  if (o.kind === 'negation' || o.kind === 'uncertainty') {
    // Polarity and modality are part of whether a sentence supports the claim at all (checkClaim).
    return { obligationId: o.id, label: claim.label, evidenceIds: claim.evidenceIds };
  }
  if (claim.label !== 'supported' && claim.label !== 'ambiguous')
    return {
      obligationId: o.id,
      label: claim.label === 'contradicted' ? 'contradicted' : 'insufficient',
      evidenceIds: claim.evidenceIds,
    };
  const carrying: string[] = [];
  const conflicting: string[] = [];
  for (const s of claim.supporting) {
    if (o.kind === 'time') {
      const times = timeMentions(s.text).filter((t) => t.kind === o.time!.kind);
      if (times.some((t) => t.value === o.time!.value)) carrying.push(s.id);
      else if (times.length > 0) conflicting.push(s.id);
    } else {
      const counts = quantityMentions(s.text).filter((q) => q.unit === o.quantity!.unit);
      if (counts.some((q) => q.value === o.quantity!.value)) carrying.push(s.id);
      else if (counts.length > 0) conflicting.push(s.id);
    }
  }
  if (carrying.length > 0 && conflicting.length > 0)
    return { obligationId: o.id, label: 'ambiguous', evidenceIds: [...new Set([...carrying, ...conflicting])] };
  if (carrying.length > 0) return { obligationId: o.id, label: 'supported', evidenceIds: [...new Set(carrying)] };
  if (conflicting.length > 0)
    return { obligationId: o.id, label: 'contradicted', evidenceIds: [...new Set(conflicting)] };
  return { obligationId: o.id, label: 'insufficient', evidenceIds: [] };
}

/** Words that name one end of a relation and not the other: a link must mention each end by its own words. */
function distinctive(a: ClaimObligation, b: ClaimObligation): string[] {
  const other = new Set([...b.terms, ...b.entities]);
  return [...new Set([...a.entities, ...a.terms])].filter((t) => !other.has(t));
}

function checkRelation(
  o: Obligation & { kind: 'relation' },
  obligations: readonly Obligation[],
  passages: Prepared[],
): ObligationVerdict {
  const [a, b] = o.between.map((id) => obligations.find((x) => x.id === id)) as [ClaimObligation, ClaimObligation];
  const endA = distinctive(a, b);
  const endB = distinctive(b, a);
  const linking: string[] = [];
  const denying: string[] = [];
  for (const p of passages) {
    // A link may span two adjacent sentences of one passage ("I got the job. That's why I moved.").
    for (let i = 0; i < p.sentences.length; i++) {
      const window = p.sentences.slice(i, i + 2);
      const stems = new Set(window.flatMap((s) => [...s.stems, ...s.entities]));
      const text = window.map((s) => s.text).join(' ');
      if (!endA.some((t) => stems.has(t)) || !endB.some((t) => stems.has(t))) continue;
      if (deniesRelation(text)) denying.push(p.id);
      else if (relationFamilies(text).has(o.relation)) linking.push(p.id);
    }
  }
  const uniq = (xs: string[]) => [...new Set(xs)];
  if (denying.length > 0 && linking.length > 0)
    return { obligationId: o.id, label: 'ambiguous', evidenceIds: uniq([...linking, ...denying]) };
  if (denying.length > 0) return { obligationId: o.id, label: 'contradicted', evidenceIds: uniq(denying) };
  if (linking.length > 0) return { obligationId: o.id, label: 'supported', evidenceIds: uniq(linking) };
  return { obligationId: o.id, label: 'insufficient', evidenceIds: [] };
}

/** Pure: every obligation's verdict against the evidence. */
export function verifyDeterministically(
  obligations: readonly Obligation[],
  evidence: readonly EvidencePassage[],
): ObligationVerdict[] {
  const passages = prepare(evidence);
  const claims = new Map<string, ClaimFinding>();
  for (const o of obligations) if (o.kind === 'claim') claims.set(o.id, checkClaim(o, passages));
  return obligations.map((o): ObligationVerdict => {
    if (o.kind === 'claim') {
      const f = claims.get(o.id)!;
      return { obligationId: o.id, label: f.label, evidenceIds: f.evidenceIds };
    }
    if (o.kind === 'relation') return checkRelation(o, obligations, passages);
    const claim = claimOf(obligations, o);
    const finding = claim ? claims.get(claim.id) : undefined;
    if (!finding) return { obligationId: o.id, label: 'insufficient', evidenceIds: [] };
    return checkQualifier(o, finding);
  });
}

export function createDeterministicVerifier(): DerivationVerifier {
  return {
    id: DETERMINISTIC_VERIFIER_ID,
    version: DETERMINISTIC_VERIFIER_VERSION,
    verify: (_content, obligations, evidence) => Promise.resolve(verifyDeterministically(obligations, evidence)),
  };
}

/**
 * The holistic baseline the benchmark compares with: the whole memory as one claim, judged against the union
 * of the evidence (every entity and most words present somewhere, no passage stating its opposite).
 */
export function verifyHolistically(content: string, evidence: readonly EvidencePassage[]): ObligationLabel {
  const all = new Set(evidence.flatMap((p) => [...contentStems(p.text), ...entityStems(p.text)]));
  const entities = entityStems(content);
  const terms = contentStems(content);
  if (!entities.every((e) => all.has(e))) return 'insufficient';
  return terms.filter((t) => all.has(t)).length >= needed(terms.length) ? 'supported' : 'insufficient';
}
