/**
 * The lexical ground the deterministic derivation verifier stands on: tokens, a crude stemmer, stopwords and
 * the cue words of relations and qualifiers. English only; pure.
 */

/** Words that carry no claim of their own: they are neither anchors nor evidence of support. */
const STOPWORDS = new Set(
  (
    'a an the and or but of to in on at for with by from as is are was were be been being am has have had do does did ' +
    'i me my mine we our us you your he him his she her they them their it its this that these those there here ' +
    'user customer client who whom which what also just very really quite about into over up out then than too ' +
    'can could would should shall will may might must s t d ll ve re m now'
  ).split(' '),
);

/** Relation families the verifier knows, each with the cue words that state it in a passage or a memory. */
export const RELATION_CUES = {
  cause: [
    'because',
    'since',
    'so',
    'therefore',
    'reason',
    'why',
    'due',
    'caused',
    'cause',
    'led',
    'result',
    'thanks',
    'hence',
    'prompted',
    'forced',
    'made',
    'pushed',
    'drove',
    'convinced',
    'motivated',
  ],
  temporal: ['after', 'before', 'then', 'later', 'following', 'once', 'until', 'when', 'afterwards', 'since'],
  purpose: ['order', 'purpose', 'aim', 'goal', 'intend', 'so'],
  contrast: ['although', 'despite', 'though', 'however', 'yet', 'but'],
  condition: ['if', 'unless', 'provided', 'whenever'],
} as const;
export type RelationKind = keyof typeof RELATION_CUES;
export const RELATION_KINDS = Object.keys(RELATION_CUES) as RelationKind[];

/** How a memory's wording joins two clauses, in the order they are tried (longest first). */
export const CONNECTIVES: { phrase: string; kind: RelationKind /** the cause/earlier clause comes after the cue */ }[] =
  [
    { phrase: 'because of', kind: 'cause' },
    { phrase: 'which is why', kind: 'cause' },
    { phrase: 'as a result of', kind: 'cause' },
    { phrase: 'in order to', kind: 'purpose' },
    { phrase: 'so that', kind: 'purpose' },
    { phrase: 'due to', kind: 'cause' },
    { phrase: 'led to', kind: 'cause' },
    { phrase: 'because', kind: 'cause' },
    { phrase: 'therefore', kind: 'cause' },
    { phrase: 'after', kind: 'temporal' },
    { phrase: 'before', kind: 'temporal' },
    { phrase: 'although', kind: 'contrast' },
    { phrase: 'despite', kind: 'contrast' },
    { phrase: 'unless', kind: 'condition' },
  ];

/** Cues that deny a relation a passage would otherwise state ("not because of", "nothing to do with"). */
export const RELATION_DENIALS = [
  /\b(?:not|n't|never)\s+(?:\w+\s+){0,2}(?:because|for|due to)\b/,
  /\bnot because\b/,
  /\bnothing to do with\b/,
  /\bunrelated to\b/,
  /\bnot (?:due|related) to\b/,
  /\bwasn'?t (?:because|why|the reason)\b/,
  /\bnot (?:the|why|what)\b.{0,20}\breason\b/,
  /\bnot why\b/,
];

export const NEGATION = /\b(?:not|never|no|none|nobody|nothing|neither|nor|without|cannot)\b|n't\b/;
/** A state that changed: an opposite-polarity passage with one of these is an update, not a contradiction. */
export const STATE_CHANGE = /\b(?:no longer|any ?more|used to|stopped|quit|now|anymore|since then|changed)\b/;
export const PLANNED =
  /\b(?:plans? to|planning|planned|intends? to|going to|will|wants? to|hopes? to|thinking (?:about|of)|considering|about to|next (?:week|month|year))\b/;
export const UNCERTAIN = /\b(?:might|may|maybe|perhaps|possibly|probably|not sure|unsure|could)\b/;

export const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const RELATIVE_TIMES = [
  'yesterday',
  'today',
  'tomorrow',
  'tonight',
  'last week',
  'last month',
  'last year',
  'next week',
  'next month',
  'next year',
  'this week',
  'this month',
  'this year',
];
export const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  dozen: 12,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  hundred: 100,
};

/** Lower-case word tokens; apostrophes inside words are kept so that "don't" stays one token. */
export function words(text: string): string[] {
  return (
    text
      .toLowerCase()
      .match(/[a-z0-9]+(?:['’][a-z]+)?/g)
      ?.map((w) => w.replace('’', "'")) ?? []
  );
}

/** Crude suffix stripping: "moved", "moves", "moving" → "mov"; enough to match inflections, not synonyms. */
export function stem(word: string): string {
  let w = word.replace(/'s$/, '');
  if (/^\d/.test(w)) return w;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 4 && w.endsWith('es')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  if (w.length > 3 && /([b-df-hj-np-tv-z])\1$/.test(w)) w = w.slice(0, -1);
  return w;
}

export function isStopword(word: string): boolean {
  // The word before its apostrophe ("don't" → "don"); an index scan, not a trailing regex.
  const apostrophe = word.indexOf("'");
  return STOPWORDS.has(word) || (apostrophe >= 0 && STOPWORDS.has(word.slice(0, apostrophe)));
}

const CUE_WORDS = new Set<string>(Object.values(RELATION_CUES).flat());

/** Whether a word carries a claim of its own: not a stopword, a relation cue, a negation or a hedge. */
export function isContentWord(w: string): boolean {
  return !isStopword(w) && !CUE_WORDS.has(w) && !NEGATION.test(w) && (w === 'may' || !UNCERTAIN.test(w));
}

/** The stems a claim is made of: no stopwords, no relation cues, no negation words. */
export function contentStems(text: string): string[] {
  return [...new Set(words(text).filter(isContentWord).map(stem))];
}

/** Whether a UTF-16 code unit is one that `\s` matches (and `String.prototype.trim` removes). */
export function isWhitespace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * `text` without the trailing run of `chars`, in one backward pass. A regex such as `/[.,]+$/` retries the run from
 * every position where one starts, which is quadratic on a long run of separators that does not end the text.
 */
export function trimEndOf(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1]!)) end--;
  return text.slice(0, end);
}

/**
 * Named things a claim must find in its evidence: capitalised words not at a sentence start, and numbers.
 * Returned as stems so that they compare with `contentStems` of a passage.
 */
export function entityStems(text: string): string[] {
  const out = new Set<string>();
  const re = /(^|[.!?]\s+|\s)([A-Z][a-zA-Z]+|[0-9][0-9.,]*)/g;
  let match: RegExpExecArray | null;
  while ((match = re.exec(text)) !== null) {
    const token = match[2]!;
    const sentenceStart = match.index === 0 || /[.!?]/.test(match[1] ?? '');
    if (/^[0-9]/.test(token)) out.add(trimEndOf(token, '.,'));
    else if (!sentenceStart && !isStopword(token.toLowerCase())) out.add(stem(token.toLowerCase()));
  }
  return [...out];
}

export interface TimeMention {
  /** month, weekday, year, relative */
  kind: 'month' | 'weekday' | 'year' | 'relative';
  value: string;
}

export function timeMentions(text: string): TimeMention[] {
  const lower = text.toLowerCase();
  const found: TimeMention[] = [];
  for (const m of MONTHS)
    if (new RegExp(`\\b${m}\\b`).test(lower) && !(m === 'may' && !/\bin may\b|\bmay \d/.test(lower)))
      found.push({ kind: 'month', value: m });
  for (const d of WEEKDAYS) if (new RegExp(`\\b${d}s?\\b`).test(lower)) found.push({ kind: 'weekday', value: d });
  for (const y of lower.match(/\b(?:19|20)\d\d\b/g) ?? []) found.push({ kind: 'year', value: y });
  for (const r of RELATIVE_TIMES) if (lower.includes(r)) found.push({ kind: 'relative', value: r });
  return found;
}

export interface QuantityMention {
  value: number;
  /** The stem of the word the number counts ("kids" → "kid"). */
  unit: string;
}

export function quantityMentions(text: string): QuantityMention[] {
  const tokens = words(text);
  const found: QuantityMention[] = [];
  tokens.forEach((t, i) => {
    const value = /^\d+(?:\.\d+)?$/.test(t) ? Number(t) : NUMBER_WORDS[t];
    const next = tokens[i + 1];
    if (value === undefined || next === undefined || isStopword(next) || /^\d/.test(next)) return;
    if (MONTHS.includes(next) || (/^(?:19|20)\d\d$/.test(t) && t.length === 4)) return;
    found.push({ value, unit: stem(next) });
  });
  return found;
}

export type Modality = 'asserted' | 'planned' | 'uncertain';

/** "May" the month is not "may" the hedge. */
function withoutMonthMay(lower: string): string {
  return lower.replace(/\b(?:in|of|early|late|mid|since|until|by|on|last|next|this) may\b|\bmay \d/g, ' ');
}

export function modalityOf(text: string): Modality {
  const lower = withoutMonthMay(text.toLowerCase());
  if (UNCERTAIN.test(lower)) return 'uncertain';
  if (PLANNED.test(lower)) return 'planned';
  return 'asserted';
}

export function isNegated(text: string): boolean {
  return NEGATION.test(text.toLowerCase());
}

/** Relation families whose cue words a passage contains. */
export function relationFamilies(text: string): Set<RelationKind> {
  const ws = new Set(words(text));
  const lower = text.toLowerCase();
  const kinds = new Set<RelationKind>();
  for (const kind of RELATION_KINDS) {
    if (RELATION_CUES[kind].some((c) => ws.has(c))) kinds.add(kind);
  }
  if (/\bin order to\b|\bso that\b/.test(lower)) kinds.add('purpose');
  return kinds;
}

export function deniesRelation(text: string): boolean {
  const lower = text.toLowerCase();
  return RELATION_DENIALS.some((re) => re.test(lower));
}
