import { describe, expect, it } from 'vitest';
import { checkPatterns, patternsIn } from '../../../scripts/check-redos.js';

// `npm run check:redos` holds the instruction scan (and every other regular expression in src/) to linear time.
describe('npm run check:redos', () => {
  it('fails on a pattern that backtracks exponentially or polynomially, naming its file and line', async () => {
    const source = [
      'export const nested = /(a+)+$/;',
      "export const spaced = new RegExp('\\\\s*ignore\\\\s*\\\\s*x', 'i');",
      'export const words = /\\bsend\\s+(?:\\w+\\s*)*to\\b/;',
    ].join('\n');
    const { found } = patternsIn('fixture.ts', source);
    const { failures } = await checkPatterns(found, 2);
    expect(failures).toHaveLength(3);
    // Proved by the automaton checker, or (on a loaded machine, past its time limit) judged by fuzzing: "(fuzz)".
    expect(failures[0]).toMatch(/^fixture\.ts:1: \/\(a\+\)\+\$\/ backtracks in exponential( \(fuzz\))? time/);
    expect(failures[1]).toMatch(
      /^fixture\.ts:2: \/\\s\*ignore\\s\*\\s\*x\/i backtracks in .*polynomial( \(fuzz\))? time/,
    );
    expect(failures[2]).toMatch(/^fixture\.ts:3: .* backtracks in exponential( \(fuzz\))? time/);
  }, 60_000);

  it('passes linear patterns, those it proves and those it can only fuzz (a lookbehind)', async () => {
    const source = [
      'export const id = /^[a-z][a-z0-9-]{0,62}$/;',
      'export const prompt = /\\bsystem\\s+prompt\\b|<\\s*(?:\\/\\s*)?system\\s*>/i;',
      'export const sentences = /(?<=[.!?])\\s+/;',
    ].join('\n');
    const { found } = patternsIn('fixture.ts', source);
    expect(found).toHaveLength(3);
    const report = await checkPatterns(found, 2);
    expect(report).toMatchObject({ failures: [], distinct: 3 });
    // The lookbehind at least; the automaton may also run out of time on the alternation on a busy machine.
    expect(report.fuzzed).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
