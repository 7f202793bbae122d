/**
 * Reading shell commands out of README.md the way bash would see them: the lines of its fenced `sh` blocks, comments
 * dropped, `&&` chains split, and the words of one `npx lethe …` call with their quotes removed. Only what the
 * README's walkthrough uses is understood; anything else (a heredoc, a line continuation into a comment) is refused
 * loudly rather than run half-read.
 */

export interface ReadmeCommand {
  /** 1-based line of README.md the command starts on. */
  line: number;
  /** 1-based index of its `sh` block. */
  block: number;
  /** The command as written, without its comment. */
  text: string;
}

/** Every command of the fenced ```sh blocks, in order. */
export function readmeShellCommands(markdown: string): ReadmeCommand[] {
  const lines = markdown.split('\n');
  const commands: ReadmeCommand[] = [];
  let block = 0;
  let inside = false;
  let pending: { line: number; text: string } | null = null;
  lines.forEach((raw, index) => {
    if (!inside) {
      if (/^```sh\s*$/.test(raw)) {
        inside = true;
        block++;
      }
      return;
    }
    if (/^```\s*$/.test(raw)) {
      if (pending) throw new Error(`README.md:${pending.line}: a line continuation runs into the end of its block`);
      inside = false;
      return;
    }
    const text = withoutComment(raw).trimEnd();
    if (/<<-?\s*['"]?\w/.test(text)) throw new Error(`README.md:${index + 1}: heredocs are not understood here`);
    const joined = pending ? `${pending.text} ${text.trim()}` : text.trim();
    const start = pending?.line ?? index + 1;
    if (joined.endsWith('\\')) {
      pending = { line: start, text: joined.slice(0, -1).trimEnd() };
      return;
    }
    pending = null;
    if (joined) commands.push({ line: start, block, text: joined });
  });
  if (inside) throw new Error('README.md: an ```sh block is never closed');
  return commands;
}

/** The line without a trailing `# comment` (a `#` that starts a word outside quotes). */
export function withoutComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"') i++;
      continue;
    }
    if (c === '\\') i++;
    else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** Splits on a separator that stands outside quotes and `$(…)`. */
export function splitOutside(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quote: string | null = null;
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '$' && text[i + 1] === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i).trim());
      start = i + separator.length;
      i += separator.length - 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

/** The words of a simple command, quotes removed (no expansions: the README's arguments need none). */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: string | null = null;
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = null;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) throw new Error(`unbalanced ${quote} in: ${text}`);
  if (word !== null) words.push(word);
  return words;
}

/** Where one `npx lethe …` call of a segment sends what it prints. */
export type Sink = { kind: 'stdout' } | { kind: 'file'; path: string } | { kind: 'env'; name: string };

export interface LetheCall {
  /** The words after `npx lethe`. */
  words: string[];
  sink: Sink;
}

const EXPORTED = /^export (\w+)=\$\((.*)\)$/;
/** `NAME=$(…) ` or `NAME=value ` before a command: it changes that command's environment only. */
const LEADING_ASSIGNMENTS = /^(?:\w+=(?:\$\([^)]*\)|\S+)\s+)+/;
const REDIRECT = /\s>\s*(\S+)$/;
const NPX_LETHE = 'npx lethe ';

/**
 * The `npx lethe` call a segment (one part of an `&&` chain) is about, and where its output lands: an exported
 * variable, a file it is redirected to, or stdout. A token minted inline for one command (`LETHE_TOKEN=$(…) npx
 * lethe …`) is that command's input, not the call; null when the segment calls no `npx lethe`.
 */
export function letheCallOf(segment: string): LetheCall | null {
  const exported = EXPORTED.exec(segment);
  if (exported) {
    const inner = exported[2]!.trim();
    return inner.startsWith(NPX_LETHE)
      ? { words: shellWords(inner.slice(NPX_LETHE.length)), sink: { kind: 'env', name: exported[1]! } }
      : null;
  }
  let rest = segment.replace(LEADING_ASSIGNMENTS, '');
  const redirect = REDIRECT.exec(rest);
  if (redirect) rest = rest.slice(0, redirect.index);
  if (!rest.startsWith(NPX_LETHE)) return null;
  return {
    words: shellWords(rest.slice(NPX_LETHE.length)),
    sink: redirect ? { kind: 'file', path: redirect[1]! } : { kind: 'stdout' },
  };
}

/** The value of `--name value` among a call's words. */
export function optionValue(words: string[], name: string): string | undefined {
  const at = words.indexOf(name);
  return at >= 0 ? words[at + 1] : undefined;
}
