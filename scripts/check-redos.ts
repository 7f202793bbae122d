/**
 * Fails when a regular expression in the source can backtrack super-linearly (ReDoS): every regex literal and every
 * `new RegExp(…)` / `RegExp(…)` whose pattern is a literal, found with the TypeScript parser, is checked with recheck
 * (its pure-JavaScript backend, so no native binary or JVM is needed, on a worker thread per core). A pattern built
 * at run time cannot be checked here; it is listed so that a reader can judge it. Arguments: files or folders to
 * check (default `src`).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
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

/** What recheck concluded about one pattern, and which of its checkers concluded it. */
export type Verdict =
  | { status: 'safe'; checker: string }
  | { status: 'vulnerable'; checker: string; complexity: string; attack: string }
  | { status: 'unknown'; checker: string | null; error: string };

type CheckParams = NonNullable<Parameters<typeof recheck>[2]>;
type CheckInWorker = (source: string, flags: string, params: CheckParams) => Promise<Verdict>;

// recheck's pure-JavaScript backend computes on the thread that calls it: each worker thread checks one pattern at a
// time, so the patterns are checked in parallel on every core.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
process.env.RECHECK_BACKEND = 'pure';
const { check } = require(workerData.recheck);
parentPort.on('message', async ({ source, flags, params }) => {
  try {
    const d = await check(source, flags, params);
    parentPort.postMessage(
      d.status === 'vulnerable'
        ? { status: d.status, checker: d.checker, complexity: d.complexity.summary, attack: d.attack.pattern }
        : d.status === 'unknown'
          ? { status: d.status, checker: d.checker, error: d.error.kind }
          : { status: d.status, checker: d.checker },
    );
  } catch (e) {
    parentPort.postMessage({ status: 'unknown', checker: null, error: String(e) });
  }
});
`;

/** Runs `run` on every item, `threads` at a time, each with its own recheck worker thread. */
async function inWorkers<T, R>(
  items: readonly T[],
  threads: number,
  run: (check: CheckInWorker, item: T) => Promise<R>,
) {
  const recheckPath = createRequire(import.meta.url).resolve('recheck');
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const loop = async () => {
    const worker = new Worker(WORKER, { eval: true, workerData: { recheck: recheckPath } });
    const check: CheckInWorker = (source, flags, params) =>
      new Promise<Verdict>((resolve, reject) => {
        const settle = () => {
          worker.off('message', answered);
          worker.off('error', failed);
          worker.off('exit', exited);
        };
        const answered = (verdict: Verdict) => (settle(), resolve(verdict));
        const failed = (error: Error) => (settle(), reject(error));
        const exited = (code: number) => failed(new Error(`recheck worker exited (${code})`));
        worker.on('message', answered);
        worker.on('error', failed);
        worker.on('exit', exited);
        worker.postMessage({ source, flags, params });
      });
    try {
      while (next < items.length) {
        const i = next++;
        results[i] = await run(check, items[i]!);
      }
    } finally {
      await worker.terminate();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(threads, items.length)) }, loop));
  return results;
}

/**
 * The automaton checker proves a pattern linear (or finds its attack), but takes minutes on some patterns (a long
 * alternation of words under `\\b` and `/i`, a bounded repetition such as `{1,32}`) and does not support lookbehind.
 * When it cannot conclude within a few seconds, the fuzzing checker judges the pattern by running it on attack
 * strings it evolves, with acceleration off: acceleration counts a bounded repetition (`(?:\\w+\\s+){0,4}`) as if it
 * were unbounded and reports it polynomial.
 */
async function verdictOn(check: CheckInWorker, source: string, flags: string): Promise<Verdict> {
  const proven = await check(source, flags, { checker: 'automaton', timeout: AUTOMATON_MS });
  if (proven.status !== 'unknown') return proven;
  // Each phase bounded by steps (characters the matcher reads), not by its own wall time: the same verdict on a loaded
  // machine as on an idle one.
  return check(source, flags, {
    checker: 'fuzz',
    accelerationMode: 'off',
    timeout: FUZZ_MS,
    incubationTimeout: null,
    attackTimeout: null,
    seedingTimeout: null,
  });
}

const AUTOMATON_MS = 3_000;
/**
 * A limit on wall time, not on the search: the fuzzing checker's verdict comes from a fixed budget of attack strings,
 * and a pattern it judges in under a second on an idle machine took over 10 s on a loaded one and failed the check
 * as "could not be shown safe". The limit is there to stop a checker that never ends, not to judge speed.
 */
const FUZZ_MS = 120_000;

export interface RedosReport {
  /** One line per pattern that can backtrack super-linearly or could not be judged, naming file and line. */
  failures: string[];
  distinct: number;
  /** Distinct patterns the fuzzing checker judged, the automaton checker not concluding. */
  fuzzed: number;
}

/** Checks every pattern (each distinct one once), on `threads` worker threads. */
export async function checkPatterns(
  found: readonly FoundPattern[],
  threads = os.availableParallelism(),
): Promise<RedosReport> {
  const distinct = [...new Map(found.map((p) => [`${p.flags}/${p.source}`, p])).values()];
  const verdicts = new Map<string, Verdict>();
  await inWorkers(distinct, threads, async (check, p) => {
    verdicts.set(`${p.flags}/${p.source}`, await verdictOn(check, p.source, p.flags));
  });
  const failures: string[] = [];
  for (const p of found) {
    const verdict = verdicts.get(`${p.flags}/${p.source}`)!;
    if (verdict.status === 'vulnerable') {
      failures.push(
        `${p.file}:${p.line}: /${p.source}/${p.flags} backtracks in ${verdict.complexity} time, e.g. on ${verdict.attack}`,
      );
    } else if (verdict.status === 'unknown') {
      failures.push(`${p.file}:${p.line}: /${p.source}/${p.flags} could not be shown safe (${verdict.error})`);
    }
  }
  const fuzzed = [...verdicts.values()].filter((v) => v.checker === 'fuzz').length;
  return { failures, distinct: distinct.length, fuzzed };
}

async function main(): Promise<void> {
  const entries = process.argv.slice(2);
  const files = (entries.length > 0 ? entries : ['src', 'app']).flatMap(sourceFiles).sort();
  const found: FoundPattern[] = [];
  const dynamic: string[] = [];
  for (const file of files) {
    const result = patternsIn(file, fs.readFileSync(file, 'utf8'));
    found.push(...result.found);
    dynamic.push(...result.dynamic);
  }

  const started = Date.now();
  const { failures, distinct, fuzzed } = await checkPatterns(found);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const summary =
    `${found.length} regular expressions (${distinct} distinct, ${fuzzed} judged by fuzzing) in ${files.length} files` +
    ` checked in ${seconds} s`;
  if (dynamic.length > 0) console.log(`built at run time, not checked: ${dynamic.join(', ')}`);
  if (failures.length > 0) {
    console.error(`redos check failed: ${failures.length} of ${summary}`);
    for (const f of failures) console.error(`  ${f}`);
    process.exit(1);
  }
  console.log(`redos check ok: ${summary}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href)
  await main();
