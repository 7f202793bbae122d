/**
 * Fails when a regular expression in the source can backtrack super-linearly (ReDoS): every regex literal and every
 * `new RegExp(…)` / `RegExp(…)` whose pattern is a literal, found with the TypeScript parser, is checked with recheck
 * (its pure-JavaScript backend, so no native binary or JVM is needed). A pattern built at run time cannot be checked
 * here; it is listed so that a reader can judge it. Arguments: files or folders to check (default `src`).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { check as recheck } from 'recheck';

export interface FoundPattern {
  file: string;
  line: number;
  source: string;
  flags: string;
}

const SOURCE_FILE = /\.(?:[cm]?ts|tsx|[cm]?js|jsx)$/;

function sourceFiles(entry: string): string[] {
  const stat = fs.statSync(entry);
  if (stat.isFile()) return SOURCE_FILE.test(entry) && !entry.endsWith('.d.ts') ? [entry] : [];
  return fs
    .readdirSync(entry, { withFileTypes: true })
    .filter((e) => e.name !== 'node_modules' && !e.name.startsWith('.'))
    .flatMap((e) => sourceFiles(path.join(entry, e.name)));
}

function literalText(node: ts.Expression | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  // String.raw`…` without substitutions: the raw text is the pattern.
  if (
    ts.isTaggedTemplateExpression(node) &&
    ts.isNoSubstitutionTemplateLiteral(node.template) &&
    node.tag.getText() === 'String.raw'
  ) {
    return node.template.rawText ?? node.template.text;
  }
  return undefined;
}

/** The regular expressions of one file: those whose pattern is a literal, and where one is built at run time. */
export function patternsIn(file: string, text: string): { found: FoundPattern[]; dynamic: string[] } {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FoundPattern[] = [];
  const dynamic: string[] = [];
  const lineOf = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(sf);
      const end = literal.lastIndexOf('/');
      found.push({ file, line: lineOf(node), source: literal.slice(1, end), flags: literal.slice(end + 1) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const [patternArg, flagsArg] = node.arguments ?? [];
      const source = literalText(patternArg);
      const flags = flagsArg === undefined ? '' : literalText(flagsArg);
      if (source === undefined || flags === undefined) dynamic.push(`${file}:${lineOf(node)}`);
      else found.push({ file, line: lineOf(node), source, flags });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { found, dynamic };
}

type Check = typeof recheck;

/**
 * The automaton checker proves a pattern linear (or finds its attack) but can take minutes on a long alternation of
 * words under `\\b` and `/i`; past a few seconds the fuzzing checker, with static seeding, judges it instead.
 */
async function verdictOn(check: Check, source: string, flags: string) {
  const proven = await check(source, flags, { timeout: AUTOMATON_MS });
  if (proven.status !== 'unknown' || proven.error.kind !== 'timeout') return proven;
  // Acceleration counts a bounded repetition (`(?:\\w+\\s+){0,4}`) as if it were unbounded and reports it polynomial.
  return check(source, flags, { checker: 'fuzz', accelerationMode: 'off', timeout: FUZZ_MS });
}

const AUTOMATON_MS = 1_000;
const FUZZ_MS = 30_000;

async function main(): Promise<void> {
  process.env.RECHECK_BACKEND ??= 'pure';
  const { check } = await import('recheck');
  const entries = process.argv.slice(2);
  const files = (entries.length > 0 ? entries : ['src']).flatMap(sourceFiles).sort();
  const found: FoundPattern[] = [];
  const dynamic: string[] = [];
  for (const file of files) {
    const result = patternsIn(file, fs.readFileSync(file, 'utf8'));
    found.push(...result.found);
    dynamic.push(...result.dynamic);
  }

  const started = Date.now();
  const verdicts = new Map<string, Awaited<ReturnType<typeof check>>>();
  const failures: string[] = [];
  for (const p of found) {
    const key = `${p.flags}/${p.source}`;
    let verdict = verdicts.get(key);
    if (verdict === undefined) {
      verdict = await verdictOn(check, p.source, p.flags);
      verdicts.set(key, verdict);
    }
    if (verdict.status === 'vulnerable') {
      failures.push(
        `${p.file}:${p.line}: /${p.source}/${p.flags} backtracks in ${verdict.complexity.summary} time,` +
          ` e.g. on ${verdict.attack.pattern}`,
      );
    } else if (verdict.status === 'unknown') {
      failures.push(`${p.file}:${p.line}: /${p.source}/${p.flags} could not be shown safe (${verdict.error.kind})`);
    }
  }

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const summary = `${found.length} regular expressions (${verdicts.size} distinct) in ${files.length} files checked in ${seconds} s`;
  if (dynamic.length > 0) console.log(`built at run time, not checked: ${dynamic.join(', ')}`);
  if (failures.length > 0) {
    console.error(`redos check failed: ${failures.length} of ${summary}`);
    for (const f of failures) console.error(`  ${f}`);
    process.exit(1);
  }
  console.log(`redos check ok: ${summary}`);
}

await main();
