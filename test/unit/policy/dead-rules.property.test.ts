import fc from 'fast-check';
import jsonLogic from 'json-logic-js';
import { describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../../src/governance/policy/evaluate.js';
import { findDeadRules } from '../../../src/governance/policy/policy-check.js';

/** The values facts take in the brute-force check: strings, numbers, both zeros, null, booleans, lists. */
const DOMAIN: unknown[] = ['a', 'b', 'c', '', '1', 0, -0, 1, 2, null, true, false, ['a'], ['a', 'b'], []];
const VARS = ['x', 'y'] as const;

const constant = fc.constantFrom<unknown>('a', 'b', 'c', '1', 0, 1, 2, null, true, false);
const read = fc.oneof(
  fc.constantFrom(...VARS).map((v) => ({ var: v })),
  fc.tuple(fc.constantFrom(...VARS), constant).map(([v, d]) => ({ var: [v, d] })),
);
const operand = fc.oneof(read, constant);
const list = fc.uniqueArray(fc.constantFrom<unknown>('a', 'b', 'c', 0, 1, null, true), { maxLength: 3 });

const { condition } = fc.letrec<{ condition: unknown }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    constant,
    read,
    fc
      .tuple(fc.constantFrom('==', '===', '!=', '!==', '<', '>='), operand, operand)
      .map(([op, a, b]) => ({ [op]: [a, b] })),
    fc.tuple(read, list).map(([a, l]) => ({ in: [a, l] })),
    fc.tuple(fc.constantFrom('a', 'b'), read).map(([needle, hay]) => ({ in: [needle, hay] })),
    fc.tuple(read, constant).map(([a, c]) => ({ some: [a, { '===': [{ var: '' }, c] }] })),
    tie('condition').map((c) => ({ '!': c })),
    tie('condition').map((c) => ({ '!!': [c] })),
    fc.array(tie('condition'), { maxLength: 3 }).map((cs) => ({ and: cs })),
    fc.array(tie('condition'), { maxLength: 3 }).map((cs) => ({ or: cs })),
    fc.tuple(tie('condition'), tie('condition'), tie('condition')).map((cs) => ({ if: cs })),
    fc.constant({ missing_some: [1] }), // throws
  ),
}));

/**
 * Rule lists where later rules often repeat, narrow or combine earlier conditions, so that dead rules of every
 * kind appear and the checker is exercised on them.
 */
const rules: fc.Arbitrary<PolicyRule[]> = fc
  .array(fc.tuple(condition, fc.nat(), fc.constantFrom('copy', 'narrow', 'widen', 'fresh', 'fresh')), {
    minLength: 1,
    maxLength: 6,
  })
  .map((specs) => {
    const conditions: unknown[] = [];
    for (const [fresh, pick, how] of specs) {
      const earlier = conditions.length > 0 ? conditions[pick % conditions.length] : undefined;
      if (earlier === undefined || how === 'fresh') conditions.push(fresh);
      else if (how === 'copy') conditions.push(structuredClone(earlier));
      else if (how === 'narrow') conditions.push({ and: [fresh, earlier] });
      else conditions.push({ or: [earlier, fresh] });
    }
    return conditions.map((when, i) => ({ id: `r${i}`, outcome: 'allow', when }));
  });

/** The index of the rule that decides, as `evaluatePolicy` runs them (a throwing rule does not match). */
function decidingRule(list: readonly PolicyRule[], facts: Record<string, unknown>): number {
  return list.findIndex((r) => {
    try {
      return jsonLogic.truthy(jsonLogic.apply(r.when as jsonLogic.RulesLogic, facts));
    } catch {
      return false;
    }
  });
}

const ALL_FACTS: Record<string, unknown>[] = [{}];
for (const x of [undefined, ...DOMAIN]) {
  for (const y of [undefined, ...DOMAIN])
    ALL_FACTS.push({ ...(x === undefined ? {} : { x }), ...(y === undefined ? {} : { y }) });
}

describe('dead-rule detection is sound', () => {
  it('never reports a rule that decides for some facts', () => {
    let reported = 0;
    fc.assert(
      fc.property(rules, (list) => {
        const dead = findDeadRules(list);
        reported += dead.length;
        if (dead.length === 0) return;
        const deciders = ALL_FACTS.map((facts) => decidingRule(list, facts));
        for (const { ruleId } of dead) {
          const index = list.findIndex((r) => r.id === ruleId);
          const firing = ALL_FACTS.find((_facts, i) => deciders[i] === index);
          expect(firing, `rule ${ruleId} was reported dead but decides for ${JSON.stringify(firing)}`).toBeUndefined();
        }
      }),
      { numRuns: 500 },
    );
    expect(reported).toBeGreaterThan(250); // the generator does produce dead rules
  });
});
