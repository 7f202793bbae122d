/**
 * Splits a memory into sentences and clauses in time linear in its length, whatever it holds. The rules are those
 * of `obligations.ts` (split at the first relation connective, on both sides; "Because B, A"; "A and B"), but a
 * sentence is scanned once into tables (connective positions, commas, content words, whitespace runs) and every
 * split is answered from them: splitting again each side with regexes cost the length of the side per connective,
 * so a sentence of thousands of connectives, or a long run of spaces before a word that is not "and", held the
 * worker for seconds. Offsets are kept, so that a clause can be named by its span in the content instead of a copy
 * of its words. Pure.
 */
import { CONNECTIVES, isContentWord, isWhitespace, stem, type RelationKind } from './text-cues.js';

/** A span of text: [start, end) offsets. */
export interface TextSpan {
  start: number;
  end: number;
}

/** A clause of a sentence, by its span in the sentence. */
export interface ClauseSpan extends TextSpan {
  /** The relation that joins it to the previous clause, if a connective did. */
  joinedBy?: RelationKind;
}

/**
 * Counts the steps the scanner takes: loop iterations, characters a built-in search passes over, halvings of a
 * binary search. Tests read it to show the work grows with the length of the text, not its square.
 */
export interface ScanMeter {
  visits: number;
}

/** A clause with fewer content words than this is folded into its neighbour rather than made a claim. */
export const MIN_CLAUSE_TERMS = 2;

const COMMA = 0x2c;
const isSentenceEnd = (code: number) => code === 0x2e || code === 0x21 || code === 0x3f || code === 0x3b; // . ! ? ;

/**
 * The sentences of a text, as `text.split(/(?<=[.!?;])\s+/)` trimmed and without empty ones would give them: a
 * whitespace run that follows a sentence end separates two sentences.
 */
export function sentenceSpans(text: string, meter?: ScanMeter): TextSpan[] {
  const spans: TextSpan[] = [];
  const push = (start: number, end: number) => {
    while (start < end && isWhitespace(text.charCodeAt(start))) start++;
    while (end > start && isWhitespace(text.charCodeAt(end - 1))) end--;
    if (end > start) spans.push({ start, end });
  };
  let from = 0;
  let i = 0;
  while (i < text.length) {
    if (meter) meter.visits++;
    if (isWhitespace(text.charCodeAt(i)) && i > 0 && isSentenceEnd(text.charCodeAt(i - 1))) {
      let j = i;
      while (j < text.length && isWhitespace(text.charCodeAt(j))) j++;
      if (meter) meter.visits += j - i;
      push(from, i);
      from = j;
      i = j;
    } else i++;
  }
  push(from, text.length);
  // Trimming crosses each whitespace run at most once more.
  if (meter) meter.visits += text.length;
  return spans;
}

/** A-Z lowered, everything else kept, so that offsets in the lowered text are offsets in the text. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

const TOKEN = /[a-z0-9]+(?:['’][a-z]+)?/g;

/** Index of the first element of a sorted array that is >= value. */
function lowerBound(sorted: ArrayLike<number>, value: number, meter?: ScanMeter): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    if (meter) meter.visits++;
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Where each connective occurs in a sentence: after a separator, its words apart by whitespace, then whitespace. */
interface Occurrences {
  kind: RelationKind;
  starts: number[];
  /** Offset just past the phrase's last word (the whitespace that must follow it is there). */
  ends: number[];
}

/** One sentence, scanned once; every question the splitter asks is answered from these tables. */
class SentenceScan {
  private readonly lower: string;
  /** For each offset, the first offset at or after it that is not whitespace. */
  private readonly nextSolid: Int32Array;
  /** For each offset, the end of the text before it without its trailing whitespace. */
  private readonly trimmedEnd: Int32Array;
  /** The same, without trailing whitespace and commas. */
  private readonly trimmedEndComma: Int32Array;
  private readonly commas: number[] = [];
  private readonly connectives: Occurrences[];
  /** Content words: their offsets, and the next one with another stem (to count two distinct stems at once). */
  private readonly wordStarts: number[] = [];
  private readonly wordEnds: number[] = [];
  private readonly nextOtherStem: Int32Array;

  constructor(
    text: string,
    private readonly meter?: ScanMeter,
  ) {
    const n = text.length;
    this.lower = asciiLower(text);
    this.nextSolid = new Int32Array(n + 1);
    this.trimmedEnd = new Int32Array(n + 1);
    this.trimmedEndComma = new Int32Array(n + 1);
    this.nextSolid[n] = n;
    for (let i = n - 1; i >= 0; i--) this.nextSolid[i] = isWhitespace(text.charCodeAt(i)) ? this.nextSolid[i + 1]! : i;
    for (let i = 1; i <= n; i++) {
      const code = text.charCodeAt(i - 1);
      this.trimmedEnd[i] = isWhitespace(code) ? this.trimmedEnd[i - 1]! : i;
      this.trimmedEndComma[i] = isWhitespace(code) || code === COMMA ? this.trimmedEndComma[i - 1]! : i;
      if (code === COMMA) this.commas.push(i - 1);
    }
    const stems: string[] = [];
    for (const m of this.lower.matchAll(TOKEN)) {
      const word = m[0].replace('’', "'");
      if (!isContentWord(word)) continue;
      this.wordStarts.push(m.index);
      this.wordEnds.push(m.index + m[0].length);
      stems.push(stem(word));
    }
    this.nextOtherStem = new Int32Array(stems.length);
    for (let i = stems.length - 1; i >= 0; i--)
      this.nextOtherStem[i] =
        i + 1 >= stems.length ? stems.length : stems[i + 1] !== stems[i] ? i + 1 : this.nextOtherStem[i + 1]!;
    // Lowering, the three passes above and the token search each pass over the text once.
    this.tick(5 * n + stems.length);
    this.connectives = CONNECTIVES.map(({ phrase, kind }) => this.occurrences(phrase.split(' '), kind));
  }

  private tick(steps: number): void {
    if (this.meter) this.meter.visits += steps;
  }

  private isSeparator(i: number): boolean {
    const code = this.lower.charCodeAt(i);
    return isWhitespace(code) || code === COMMA;
  }

  private occurrences(phraseWords: string[], kind: RelationKind): Occurrences {
    const found: Occurrences = { kind, starts: [], ends: [] };
    const first = phraseWords[0]!;
    let searched = 0;
    for (let at = this.lower.indexOf(first); at >= 0; at = this.lower.indexOf(first, at + 1)) {
      // indexOf passed over the text since the last occurrence.
      this.tick(at + 1 - searched);
      searched = at + 1;
      if (at > 0 && !this.isSeparator(at - 1)) continue;
      let end = at + first.length;
      let matched = true;
      for (const word of phraseWords.slice(1)) {
        this.tick(word.length + 1);
        const after = this.nextSolid[end]!;
        if (after === end || !this.lower.startsWith(word, after)) {
          matched = false;
          break;
        }
        end = after + word.length;
      }
      if (matched && end < this.lower.length && isWhitespace(this.lower.charCodeAt(end))) {
        found.starts.push(at);
        found.ends.push(end);
      }
    }
    this.tick(this.lower.length - searched);
    return found;
  }

  /**
   * The first occurrence of a connective wholly inside [lo, hi), with the whitespace after it. A segment starts at
   * the sentence's start or after a separator, so the occurrence at `lo` is the one a `^` anchor would find.
   */
  private firstIn(o: Occurrences, lo: number, hi: number): { start: number; end: number } | undefined {
    const k = lowerBound(o.starts, lo, this.meter);
    const start = o.starts[k];
    const end = o.ends[k];
    // Occurrences do not overlap, so a later one ends later still.
    return start !== undefined && end !== undefined && end < hi ? { start, end } : undefined;
  }

  /** How many distinct content stems [lo, hi) holds, counted up to two. */
  termsIn(lo: number, hi: number): number {
    const first = lowerBound(this.wordStarts, lo, this.meter);
    const last = lowerBound(this.wordEnds, hi + 1, this.meter); // words ending at or before hi
    if (first >= last) return 0;
    return this.nextOtherStem[first]! < last ? 2 : 1;
  }

  /** [lo, hi) without surrounding whitespace. */
  trim(lo: number, hi: number): TextSpan {
    const start = Math.min(hi, this.nextSolid[lo]!);
    return { start, end: Math.max(start, this.trimmedEnd[hi]!) };
  }

  /**
   * The sub-segments of [lo, hi) at its first connective that makes a split, in the clauses' order with the
   * relation that joins the second; undefined when none does.
   */
  splitAtConnective(lo: number, hi: number): [TextSpan, ClauseSpan] | undefined {
    for (const o of this.connectives) {
      this.tick(1);
      const at = this.firstIn(o, lo, hi);
      if (!at) continue;
      const leftEnd = Math.max(lo, this.trimmedEndComma[at.start]!);
      const right = this.trim(at.end, hi);
      const terms = this.termsIn(right.start, right.end);
      if (terms === 0) continue;
      // "before noon", "after lunch": a time on the clause, not a second clause to relate it to.
      if (o.kind === 'temporal' && terms < MIN_CLAUSE_TERMS) continue;
      if (leftEnd === lo) {
        // "Because B, A": the cause is written first; split at the comma.
        const comma = this.commas[lowerBound(this.commas, right.start, this.meter)];
        if (comma === undefined || comma >= right.end) continue;
        return [
          { start: comma + 1, end: right.end },
          { start: right.start, end: comma, joinedBy: o.kind },
        ];
      }
      return [
        { start: lo, end: leftEnd },
        { ...right, joinedBy: o.kind },
      ];
    }
    return undefined;
  }

  /**
   * "A and B" where both sides are clauses of their own: the parts of [lo, hi) between `,? \s+ and \s+` (case
   * insensitive), or [lo, hi) itself when any part has too few content words. A whitespace run not followed by
   * "and" is skipped whole, so it is crossed once.
   */
  andParts(lo: number, hi: number): TextSpan[] {
    const parts: TextSpan[] = [];
    let from = lo;
    let i = lo;
    while (i < hi) {
      this.tick(1);
      const code = this.lower.charCodeAt(i);
      if (code !== COMMA && !isWhitespace(code)) {
        i++;
        continue;
      }
      const runStart = code === COMMA ? i + 1 : i;
      const runEnd = Math.min(hi, this.nextSolid[runStart]!);
      const word = runEnd;
      if (
        runEnd > runStart &&
        word + 3 < hi &&
        this.lower.startsWith('and', word) &&
        isWhitespace(this.lower.charCodeAt(word + 3))
      ) {
        parts.push({ start: from, end: i });
        from = Math.min(hi, this.nextSolid[word + 3]!);
        i = from;
      } else i = Math.max(i + 1, runEnd);
    }
    parts.push({ start: from, end: hi });
    if (parts.length > 1 && parts.every((p) => this.termsIn(p.start, p.end) >= MIN_CLAUSE_TERMS)) return parts;
    return [{ start: lo, end: hi }];
  }
}

/**
 * The clauses of one sentence, in order: split at the first relation connective (in `CONNECTIVES` order) on both
 * sides, then at "and" between clauses. Iterative, so that a sentence of thousands of connectives does not exhaust
 * the stack.
 */
export function clauseSpans(sentence: string, meter?: ScanMeter): ClauseSpan[] {
  const scan = new SentenceScan(sentence, meter);
  const clauses: ClauseSpan[] = [];
  // Segments still to split, the next one last; `joinedBy` belongs to the first clause the segment yields.
  const pending: ClauseSpan[] = [{ start: 0, end: sentence.length }];
  for (let segment = pending.pop(); segment; segment = pending.pop()) {
    const split = scan.splitAtConnective(segment.start, segment.end);
    if (split) {
      const [first, second] = split;
      pending.push(second, { ...first, ...(segment.joinedBy ? { joinedBy: segment.joinedBy } : {}) });
      continue;
    }
    scan
      .andParts(segment.start, segment.end)
      .forEach((part, i) => clauses.push(i === 0 && segment.joinedBy ? { ...part, joinedBy: segment.joinedBy } : part));
  }
  return clauses;
}
