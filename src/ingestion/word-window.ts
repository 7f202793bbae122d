/**
 * A word-window matcher, pure and linear: finds a verb phrase followed, within a few words, by an object phrase (and
 * what must come after it), over words that follow one another separated only by whitespace. It is what a regular
 * expression of the form `\bverb\s+(?:\w+\s+){0,N}object\b` matches, without the backtracking such a pattern costs
 * over long runs of words: the text is split into words once, and each verb looks at most N + 1 words ahead.
 *
 * A word is a maximal run of `\w` characters (ASCII letters, digits, `_`) and whitespace is what `\s` matches, as in
 * the regular expressions it stands for; words compare case-insensitively.
 */
import { isWhitespace } from '../governance/derivation/text-cues.js';

/** One word of a text, lower-cased, with where it starts and ends. */
export interface Word {
  text: string;
  start: number;
  end: number;
  /** Whether only whitespace (at least one character) separates it from the word before. */
  spaced: boolean;
}

/**
 * Words in sequence: `'turn off'` is two words separated by whitespace, `'e-mail'` two words separated by exactly a
 * hyphen.
 */
export type Phrase = string;

/** A verb phrase, then up to `within` words, then an object phrase, then (optionally) what must follow it. */
export interface WordWindow {
  verbs: readonly Phrase[];
  within: number;
  /** One word more is allowed when the first word between verb and object is one of these (`the`, `your`). */
  leading?: readonly string[];
  /** One word more is allowed when the last word between verb and object is one of these (`to`). */
  trailing?: readonly string[];
  objects: readonly Phrase[];
  /** What must follow the object, given the text, its words and the index of the first word after the object. */
  followedBy?: (text: string, words: readonly Word[], next: number) => boolean;
}

/** Whether code unit `c` is one that `\w` matches. */
export const isWordCode = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;

/** The words of `text`, in order. */
export function wordsOf(text: string): Word[] {
  const words: Word[] = [];
  let i = 0;
  let previousEnd = -1;
  while (i < text.length) {
    if (!isWordCode(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && isWordCode(text.charCodeAt(i))) i++;
    let spaced = previousEnd >= 0;
    for (let k = previousEnd; spaced && k < start; k++) spaced = isWhitespace(text.charCodeAt(k));
    words.push({ text: text.slice(start, i).toLowerCase(), start, end: i, spaced });
    previousEnd = i;
  }
  return words;
}

interface CompiledPhrase {
  words: string[];
  /** Separators before each word after the first: whitespace, or the exact text (`-`). */
  joints: string[];
}

function compilePhrase(phrase: Phrase): CompiledPhrase {
  const words: string[] = [];
  const joints: string[] = [];
  for (const part of phrase.split(' ')) {
    part.split('-').forEach((word, k) => {
      if (words.length > 0) joints.push(k === 0 ? ' ' : '-');
      words.push(word.toLowerCase());
    });
  }
  return { words, joints };
}

/** The index of the last word of `phrase` when it starts at word `at`, or -1. */
function phraseAt(text: string, words: readonly Word[], at: number, phrase: CompiledPhrase): number {
  for (let k = 0; k < phrase.words.length; k++) {
    const word = words[at + k];
    if (word === undefined || word.text !== phrase.words[k]) return -1;
    if (k > 0) {
      const joint = phrase.joints[k - 1]!;
      const joined = joint === ' ' ? word.spaced : text.slice(words[at + k - 1]!.end, word.start) === joint;
      if (!joined) return -1;
    }
  }
  return at + phrase.words.length - 1;
}

/** A window compiled once, to be run over many texts. */
export interface CompiledWordWindow {
  /** Whether the window is found in `text`, whose words are `words`. */
  test(text: string, words: readonly Word[]): boolean;
}

const NONE: readonly CompiledPhrase[] = [];

/** Phrases by their first word, so that each word is looked up once. */
function byFirstWord(phrases: readonly Phrase[]): Map<string, CompiledPhrase[]> {
  const map = new Map<string, CompiledPhrase[]>();
  for (const phrase of phrases.map(compilePhrase)) {
    const first = phrase.words[0]!;
    map.set(first, [...(map.get(first) ?? []), phrase]);
  }
  return map;
}

export function compileWordWindow(window: WordWindow): CompiledWordWindow {
  const verbs = byFirstWord(window.verbs);
  const objects = byFirstWord(window.objects);
  const leading = new Set(window.leading ?? []);
  const trailing = new Set(window.trailing ?? []);
  const followedBy = window.followedBy ?? (() => true);
  const objectAt = (text: string, words: readonly Word[], at: number): boolean =>
    (objects.get(words[at]!.text) ?? NONE).some((o) => {
      const last = phraseAt(text, words, at, o);
      return last >= 0 && followedBy(text, words, last + 1);
    });
  return {
    test(text, words) {
      for (let at = 0; at < words.length; at++) {
        for (const verb of verbs.get(words[at]!.text) ?? NONE) {
          const last = phraseAt(text, words, at, verb);
          if (last < 0) continue;
          // Words between verb and object: `between` of them, each separated from the one before by whitespace.
          for (let between = 0; between <= window.within + 1; between++) {
            const object = last + 1 + between;
            if (words[object]?.spaced !== true) break;
            if (between === window.within + 1) {
              const extraAllowed = leading.has(words[last + 1]!.text) || trailing.has(words[object - 1]!.text);
              if (!extraAllowed) break;
            }
            if (objectAt(text, words, object)) return true;
          }
        }
      }
      return false;
    },
  };
}
