/**
 * Decomposes a memory into the obligations its evidence must meet (seed 002 §3.2): factual claims, the
 * relations between them, and the qualifiers on a claim (time, negation, uncertainty, quantity). Pure and
 * deterministic: the same content always gives the same obligations with the same ids, so a verdict that
 * holds only ids can be read back against the content kept in MongoDB.
 */
import { clauseSpans, sentenceSpans, type ScanMeter } from './clause-scan.js';
import {
  contentStems,
  MONTHS,
  NUMBER_WORDS,
  WEEKDAYS,
  entityStems,
  isNegated,
  modalityOf,
  quantityMentions,
  stem,
  timeMentions,
  type Modality,
  type QuantityMention,
  type RelationKind,
  type TimeMention,
} from './text-cues.js';

export type QualifierKind = 'time' | 'negation' | 'uncertainty' | 'quantity';
export type ObligationKind = 'claim' | 'relation' | QualifierKind;

/** One clause of the memory that states a fact of its own. */
export interface ClaimObligation {
  id: string;
  kind: 'claim';
  text: string;
  /** Where the text is in the memory's content: [start, end) offsets, so that a record can name it without a copy. */
  span: [number, number];
  entities: string[];
  terms: string[];
  negated: boolean;
  modality: Modality;
}

/** A relation the memory states between two of its claims ("A because B"): evidence for the link itself. */
export interface RelationObligation {
  id: string;
  kind: 'relation';
  relation: RelationKind;
  /** Ids of the two claims it joins, in the memory's order. */
  between: [string, string];
}

/** A qualifier on one claim: a time, a negation, a hedge or plan, a number. */
export interface QualifierObligation {
  id: string;
  kind: QualifierKind;
  claim: string;
  time?: TimeMention;
  quantity?: QuantityMention;
  modality?: Modality;
}

export type Obligation = ClaimObligation | RelationObligation | QualifierObligation;

/** The kinds an obligation may be named by in a refusal or a verdict (never its text). */
export const OBLIGATION_KINDS: readonly ObligationKind[] = [
  'claim',
  'relation',
  'time',
  'negation',
  'uncertainty',
  'quantity',
];

const NUMBER_STEMS = new Set(Object.keys(NUMBER_WORDS).map(stem));

/** Times and numbers are qualifiers of their own: the claim is the proposition without them. */
function isQualifierWord(stemmed: string): boolean {
  return (
    /^\d/.test(stemmed) ||
    NUMBER_STEMS.has(stemmed) ||
    MONTHS.some((m) => m.startsWith(stemmed) && stemmed.length >= 3) ||
    WEEKDAYS.some((d) => d.startsWith(stemmed) && stemmed.length >= 5) ||
    ['yesterday', 'today', 'tomorrow', 'tonight', 'week', 'month', 'year', 'last', 'next'].includes(stemmed)
  );
}

/**
 * The obligations of a memory, in a stable order: claims with their qualifiers, then relations. Linear in the
 * length of the content (`clause-scan.ts`); `meter` counts the splitter's steps.
 */
export function decompose(content: string, meter?: ScanMeter): Obligation[] {
  const clauses = sentenceSpans(content, meter).flatMap((sentence, i) =>
    clauseSpans(content.slice(sentence.start, sentence.end), meter).map((c, j) => ({
      text: content.slice(sentence.start + c.start, sentence.start + c.end),
      span: [sentence.start + c.start, sentence.start + c.end] as [number, number],
      // A new sentence is never joined to the last clause of the one before.
      ...(c.joinedBy && (i === 0 || j > 0) ? { joinedBy: c.joinedBy } : {}),
    })),
  );
  const claims: ClaimObligation[] = [];
  const qualifiers: QualifierObligation[] = [];
  const relations: RelationObligation[] = [];
  let next = 1;
  const id = () => `o${next++}`;
  let previous: ClaimObligation | undefined;
  for (const clause of clauses) {
    const terms = contentStems(clause.text).filter((t) => !isQualifierWord(t));
    if (terms.length === 0 && previous) continue;
    const claim: ClaimObligation = {
      id: id(),
      kind: 'claim',
      text: clause.text,
      span: clause.span,
      entities: entityStems(clause.text).filter((t) => !isQualifierWord(t)),
      terms,
      negated: isNegated(clause.text),
      modality: modalityOf(clause.text),
    };
    claims.push(claim);
    for (const time of timeMentions(clause.text)) qualifiers.push({ id: id(), kind: 'time', claim: claim.id, time });
    for (const quantity of quantityMentions(clause.text))
      qualifiers.push({ id: id(), kind: 'quantity', claim: claim.id, quantity });
    if (claim.negated) qualifiers.push({ id: id(), kind: 'negation', claim: claim.id });
    if (claim.modality !== 'asserted')
      qualifiers.push({ id: id(), kind: 'uncertainty', claim: claim.id, modality: claim.modality });
    if (clause.joinedBy && previous)
      relations.push({ id: id(), kind: 'relation', relation: clause.joinedBy, between: [previous.id, claim.id] });
    previous = claim;
  }
  return [...claims, ...qualifiers, ...relations].sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
}

/** The claim an obligation is about (a qualifier's claim, or itself). */
export function claimOf(obligations: readonly Obligation[], o: Obligation): ClaimObligation | undefined {
  if (o.kind === 'claim') return o;
  if (o.kind === 'relation') return undefined;
  return obligations.find((c): c is ClaimObligation => c.kind === 'claim' && c.id === o.claim);
}

/** The words an obligation's evidence must mention, used to tell whether a passage left out could bear on it. */
export function anchorsOf(obligations: readonly Obligation[], o: Obligation): string[] {
  if (o.kind === 'relation') {
    return o.between.flatMap((id) => {
      const c = obligations.find((x) => x.id === id);
      return c?.kind === 'claim' ? [...c.entities, ...c.terms] : [];
    });
  }
  const claim = claimOf(obligations, o);
  return claim ? [...new Set([...claim.entities, ...claim.terms])] : [];
}
