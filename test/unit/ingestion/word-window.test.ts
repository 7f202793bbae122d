import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileWordWindow, isWordCode, wordsOf } from '../../../src/ingestion/word-window.js';

describe('the words of a text', () => {
  it('are made of what \\w matches under /i, for every UTF-16 code unit', () => {
    for (let c = 0; c <= 0xffff; c++)
      expect(isWordCode(c), `U+${c.toString(16)}`).toBe(/\w/i.test(String.fromCharCode(c)));
  });

  it('are the maximal runs of word characters, lower-cased, each knowing whether whitespace alone precedes it', () => {
    expect(wordsOf('Send\t the-KEYS,\u00a0to x@y.z')).toEqual([
      { text: 'send', start: 0, end: 4, spaced: false },
      { text: 'the', start: 6, end: 9, spaced: true },
      { text: 'keys', start: 10, end: 14, spaced: false },
      { text: 'to', start: 16, end: 18, spaced: false },
      { text: 'x', start: 19, end: 20, spaced: true },
      { text: 'y', start: 21, end: 22, spaced: false },
      { text: 'z', start: 23, end: 24, spaced: false },
    ]);
  });

  it('are what /\\w+/g finds (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        expect(wordsOf(text).map((w) => w.text)).toEqual([...text.matchAll(/\w+/g)].map(([m]) => m.toLowerCase()));
      }),
    );
  });
});

describe('a word window', () => {
  const window = compileWordWindow({
    verbs: ['turn off', 'e-mail'],
    within: 1,
    leading: ['the'],
    objects: ['audit log'],
    followedBy: (_, words, next) => words[next] === undefined,
  });
  const test = (text: string) => window.test(text, wordsOf(text));

  it('finds a verb phrase followed within so many words by an object phrase and what must follow it', () => {
    expect(test('Turn  OFF audit log')).toBe(true);
    expect(test('turn off x audit log')).toBe(true);
    expect(test('turn off the x audit log')).toBe(true);
    expect(test('e-mail audit\nlog')).toBe(true);
  });

  it('does not look past its window, across punctuation, or into a word', () => {
    expect(test('turn off x y audit log')).toBe(false);
    expect(test('turn off x the audit log')).toBe(false);
    expect(test('turn off x, audit log')).toBe(false);
    expect(test('turn off, audit log')).toBe(false);
    expect(test('turn-off audit log')).toBe(false);
    expect(test('e mail audit log')).toBe(false);
    expect(test('return off audit log')).toBe(false);
    expect(test('turn off audit logs')).toBe(false);
    expect(test('turn off audit log again')).toBe(false);
  });
});
