/**
 * The derivation audit's text handling is linear on any input: the clause splitter is shown to take a number of
 * steps proportional to the text on inputs built to make the former regex splitting quadratic (it counts its steps;
 * no clock is read), it splits exactly as the former regex code did on random text, and no regex of the audit's
 * sources trims a trailing run (`\s+$`, `[.,]+$`), the form that retries the run from each of its positions.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decompose } from '../../../src/governance/derivation/obligations.js';
import { clauseSpans, sentenceSpans, type ScanMeter } from '../../../src/governance/derivation/clause-scan.js';
import {
  CONNECTIVES,
  contentStems,
  isStopword,
  isWhitespace,
  trimEndOf,
} from '../../../src/governance/derivation/text-cues.js';

/** The former splitter, kept as the reference: regexes over each side again at each split. */
function formerClauses(sentence: string): { text: string; joinedBy?: string }[] {
  const lower = sentence.toLowerCase();
  for (const { phrase, kind } of CONNECTIVES) {
    const at = new RegExp(`(^|[\\s,])${phrase.replace(/ /g, '\\s+')}\\s`).exec(lower);
    if (!at) continue;
    const start = at.index + at[1]!.length;
    const left = sentence.slice(0, start).replace(/[\s,]+$/, '');
    // The matched phrase's length (the former code used the phrase's own, and cut into a word after a double space).
    const right = sentence.slice(start + at[0].length - at[1]!.length - 1).trim();
    if (contentStems(right).length === 0) continue;
    if (kind === 'temporal' && contentStems(right).length < 2) continue;
    if (left.length === 0) {
      const comma = right.indexOf(',');
      if (comma < 0) continue;
      return [
        ...formerClauses(right.slice(comma + 1)),
        ...formerClauses(right.slice(0, comma)).map((c, i) => (i === 0 ? { ...c, joinedBy: kind } : c)),
      ];
    }
    const [first, ...rest] = formerClauses(right);
    return [...formerClauses(left), { ...first!, joinedBy: kind }, ...rest];
  }
  const parts = sentence.split(/,?\s+and\s+/i);
  if (parts.length > 1 && parts.every((p) => contentStems(p).length >= 2)) return parts.map((text) => ({ text }));
  return [{ text: sentence }];
}

function formerShape(content: string) {
  return content
    .split(/(?<=[.!?;])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .flatMap((s, i) => formerClauses(s).map((c, j) => (i > 0 && j === 0 ? { text: c.text } : c)));
}

/** The clauses the splitter finds, with the relation that joins each to the one before. */
function shapeOf(content: string) {
  return sentenceSpans(content).flatMap((sentence, i) => {
    const text = content.slice(sentence.start, sentence.end);
    return clauseSpans(text).map((c, j) => {
      const clause = { text: text.slice(c.start, c.end) };
      return c.joinedBy && (i === 0 || j > 0) ? { ...clause, joinedBy: c.joinedBy } : clause;
    });
  });
}

const VOCABULARY = [
  'Ana',
  'moved',
  'to',
  'Berlin',
  'because',
  'Because',
  'of',
  'after',
  'before',
  'and',
  'AND',
  'so',
  'that',
  'in',
  'order',
  'due',
  'led',
  'although',
  'despite',
  'unless',
  'therefore',
  'which',
  'is',
  'why',
  'as',
  'a',
  'result',
  'the',
  'new',
  'job',
  'three',
  'kids',
  'May',
  'not',
  'might',
  'plans',
  '2024',
  'Monday',
  "don't",
  'lunch',
  'Siemens',
  'afterwards',
];
const SEPARATORS = [' ', ' ', ' ', '  ', ',', ', ', '. ', ';', '\t', '\u00a0', '! ', '? ', '\n', '   ', ' ,  '];
const text = fc
  .array(fc.tuple(fc.constantFrom(...VOCABULARY), fc.constantFrom(...SEPARATORS)), { maxLength: 40 })
  .map((pairs) => pairs.map(([w, s]) => w + s).join(''));

describe('the clause splitter', () => {
  it('splits random text into the clauses and relations the former regex splitter did', () => {
    fc.assert(
      fc.property(text, (content) => {
        expect(shapeOf(content)).toEqual(formerShape(content));
        for (const o of decompose(content))
          if (o.kind === 'claim') expect(content.slice(o.span[0], o.span[1])).toBe(o.text);
      }),
      { numRuns: 3000 },
    );
  });
});

/** Inputs built to make regex splitting and trimming backtrack: long runs that do not end where a pattern wants. */
const ADVERSARIAL: Record<string, (n: number) => string> = {
  'a word, then a run of spaces': (n) => 'a'.repeat(n / 2) + ' '.repeat(n / 2) + 'b',
  'a run of spaces between two words': (n) => 'x' + ' '.repeat(n) + 'x',
  'a run of spaces after a connective': (n) => 'Ana moved because' + ' '.repeat(n) + 'of',
  'a run of commas and spaces before a connective': (n) => 'Ana moved' + ', '.repeat(n / 2) + 'because she left',
  'thousands of connectives in one sentence': (n) => 'Ana went home after lunch with Bob '.repeat(n / 35),
  'causes written first, nested': (n) => 'because x y, '.repeat(n / 26) + 'Ana left' + ' z w,'.repeat(n / 20),
  'runs of punctuation': (n) => '.,;!?'.repeat(n / 5) + 'x',
  'clauses joined by and': (n) => 'Ana sold cars, and '.repeat(n / 19) + 'Bob left',
  'no-break spaces': (n) => 'a,' + '\u00a0'.repeat(n) + 'x and',
};

describe('the derivation audit on hostile text', () => {
  const sizes = [32 * 1024, 64 * 1024, 128 * 1024, 256 * 1024];

  it.each(Object.entries(ADVERSARIAL))('splits %s in steps proportional to its length', (_, build) => {
    const steps = sizes.map((size) => {
      const meter: ScanMeter = { visits: 0 };
      const content = build(size);
      decompose(content, meter);
      // A bounded number of steps per character whatever the text...
      expect(meter.visits).toBeLessThan(64 * content.length);
      return meter.visits / content.length;
    });
    // ...and not growing with the length: steps per character at 256 KB within a small factor of those at 32 KB.
    expect(steps[3]!).toBeLessThan(2 * steps[0]! + 8);
  });

  it('trims trailing separators exactly as the regex did, and reads a stopword before an apostrophe', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', ',', '.', '\t', 'x', '1') }), (s) => {
        expect(trimEndOf(s, '.,')).toBe(s.replace(/[.,]+$/, ''));
      }),
      { numRuns: 2000 },
    );
    expect(["it's", "they'll", 'the', "ana's", 'berlin'].map(isStopword)).toEqual([true, true, true, false, false]);
  });

  it('reads as whitespace exactly the characters \\s matches', () => {
    for (let code = 0; code <= 0xffff; code++)
      expect(isWhitespace(code), `U+${code.toString(16)}`).toBe(/\s/.test(String.fromCharCode(code)));
  });

  it('has no regex in its sources that trims a trailing run', () => {
    const dir = join(import.meta.dirname, '../../../src/governance/derivation');
    // A quantifier right before the end anchor, in a regex literal or a RegExp's source string.
    const trailingRun = /[+*}]\)*\$(?:\/|`|'|")/;
    const offending = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        readFileSync(join(dir, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ at: `${f}:${i + 1}`, line }))
          .filter(({ line }) => trailingRun.test(line) && !line.trim().startsWith('*')),
      );
    expect(offending).toEqual([]);
    // The check recognises the former form.
    expect(trailingRun.test("sentence.slice(0, start).replace(/[\\s,]+$/, '')")).toBe(true);
  });
});
