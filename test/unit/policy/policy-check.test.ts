import { afterAll, describe, expect, it } from 'vitest';
import {
  checkPolicyDirectory,
  checkPolicyDocument,
  findDeadRules,
  restrictiveDefaultProblem,
  type PolicyFinding,
} from '../../../src/governance/policy/policy-check.js';
import { POLICIES_DIR } from '../../../src/governance/policy/policy-set.js';
import { policyDir, policyWith, removePolicyDirs, rule } from './policy-fixtures.js';

afterAll(removePolicyDirs);

const isDpo = { some: [{ var: 'roles' }, { '===': [{ var: '' }, 'dpo'] }] };

function codes(findings: PolicyFinding[], severity: 'error' | 'warning' = 'error'): string[] {
  return findings.filter((f) => f.severity === severity).map((f) => f.code);
}

function check(doc: unknown): PolicyFinding[] {
  return checkPolicyDocument(doc, 'sample.json').findings;
}

describe('policy check: schema', () => {
  it('accepts a well-formed policy without findings', () => {
    const doc = policyWith([
      rule('dpo', { and: [isDpo, { '===': [{ var: 'ground' }, 'a'] }] }),
      rule('tier', { '>=': [{ var: 'tier' }, 2] }),
      rule('flag', { '===': [{ var: 'flag' }, true] }, 'deny'),
    ]);
    const result = checkPolicyDocument(doc, 'sample.json');
    expect(result.findings).toEqual([]);
    expect(result.policy).toBe(doc);
  });

  it('reports a policy without a default', () => {
    const { default: _omitted, ...doc } = policyWith([rule('dpo', isDpo)]);
    const findings = check(doc);
    expect(findings).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'schema',
        message: expect.stringMatching(/^default: required/),
      }),
    );
    expect(checkPolicyDocument(doc, 'sample.json').policy).toBeNull();
  });

  it('reports a default that is not among the outcomes', () => {
    const findings = check(policyWith([], { default: 'refuse' }));
    expect(findings).toContainEqual(
      expect.objectContaining({
        code: 'schema',
        message: expect.stringContaining('"refuse" is not one of the declared'),
      }),
    );
  });

  it('reports a rule whose outcome is not declared, naming the rule', () => {
    const findings = check(policyWith([rule('maybe', isDpo, 'perhaps')]));
    expect(findings).toContainEqual(
      expect.objectContaining({ code: 'schema', ruleId: 'maybe', message: expect.stringContaining('"perhaps"') }),
    );
  });

  it('reports duplicate rule ids, rules without a condition and malformed fields', () => {
    const findings = check({
      ...policyWith([]),
      version: 0,
      variables: { roles: 'list' },
      outcomes: ['allow', 'allow', 'deny'],
      rules: [rule('a', isDpo), rule('a', true), { id: 'b', outcome: 'allow' }],
    });
    const messages = findings.filter((f) => f.code === 'schema').map((f) => f.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^version:/),
        expect.stringMatching(/^variables\.roles: type must be/),
        expect.stringMatching(/^outcomes: "allow" is listed twice/),
        'rule "a": the id is used by an earlier rule',
        'rule "b": "when" (a json-logic condition) is required',
      ]),
    );
  });

  it('reports a document that is not an object at all', () => {
    expect(check([1, 2])).toEqual([expect.objectContaining({ policyId: null, severity: 'error', code: 'schema' })]);
  });

  it('warns about unknown fields and rules without a reason, without failing', () => {
    const findings = check({ ...policyWith([{ id: 'r', outcome: 'allow', when: isDpo }]), owner: 'x' });
    expect(codes(findings)).toEqual([]);
    expect(findings.map((f) => f.message)).toEqual(
      expect.arrayContaining([expect.stringContaining('unknown field "owner"'), expect.stringContaining('no reason')]),
    );
  });

  it('requires the most restrictive outcome as the default', () => {
    expect(codes(check(policyWith([rule('r', isDpo, 'deny')], { default: 'allow' })))).toContain(
      'default-not-restrictive',
    );
    expect(restrictiveDefaultProblem(['P30D', 'P1Y', 'PT4H'], 'P30D')).toMatch(/"PT4H" is shorter/);
    expect(restrictiveDefaultProblem(['P30D', 'P1Y'], 'P30D')).toBeNull();
    expect(restrictiveDefaultProblem(['high', 'low'], 'low')).toMatch(/"high" is declared/);
    expect(restrictiveDefaultProblem(['gold', 'silver'], 'gold')).toBeNull();
  });

  it('reports json-logic that json-logic-js would not evaluate as written', () => {
    const findings = check(
      policyWith([
        rule('unknown-op', { startsWith: [{ var: 'ground' }, 'art'] }),
        rule('two-keys', { '==': [{ var: 'ground' }, 'a'], '!=': [1, 2] }),
        rule('computed', { var: { cat: ['gro', 'und'] } }),
        rule('whole-facts', { '!!': { var: '' } }),
      ]),
    );
    const logic = findings.filter((f) => f.code === 'invalid-logic');
    expect(logic.map((f) => f.ruleId)).toEqual(['unknown-op', 'two-keys', 'computed', 'whole-facts']);
  });
});

describe('policy check: unknown variables', () => {
  it('reports a variable the policy does not declare', () => {
    const findings = check(policyWith([rule('r', { '===': [{ var: 'role' }, 'dpo'] })]));
    expect(findings).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'unknown-variable',
        ruleId: 'r',
        message: expect.stringContaining('reads "role"'),
      }),
    );
  });

  it('finds variables nested deep in a condition, by the first segment of a dotted path', () => {
    const when = {
      or: [
        { and: [isDpo, { '!': { in: [{ var: 'request.ground' }, ['a']] } }] },
        { if: [{ var: ['flag', false] }, { '<': [1, { var: 'tier' }, { var: 'limit' }] }, false] },
        { missing: ['ground', 'subject'] },
      ],
    };
    const unknown = check(policyWith([rule('deep', when)])).filter((f) => f.code === 'unknown-variable');
    expect(unknown.map((f) => f.message)).toEqual([
      expect.stringContaining('reads "request" (in "request.ground")'),
      expect.stringContaining('reads "limit"'),
      expect.stringContaining('reads "subject"'),
    ]);
  });

  it('does not mistake the element read inside some/all/map for a fact', () => {
    const when = { all: [{ var: 'roles' }, { in: [{ var: '' }, ['dpo']] }] };
    const mapped = { some: [{ map: [{ var: 'roles' }, { cat: [{ var: '' }, '!'] }] }, { '==': [{ var: 'x' }, 1] }] };
    expect(codes(check(policyWith([rule('all', when), rule('map', mapped)])))).toEqual([]);
  });

  it('warns about a declared variable no rule reads', () => {
    const findings = check(policyWith([rule('dpo', isDpo)]));
    expect(findings.filter((f) => f.code === 'unused-variable').map((f) => f.message)).toEqual([
      'variable "ground" is declared but no rule reads it',
      'variable "tier" is declared but no rule reads it',
      'variable "flag" is declared but no rule reads it',
    ]);
    expect(codes(findings)).toEqual([]);
  });
});

describe('policy check: dead rules', () => {
  const live = rule('live', isDpo);

  it.each([
    ['the literal false', false],
    ['a comparison of constants', { '==': [1, 2] }],
    ['a conjunction with a false member', { and: [isDpo, { '>': [{ var: 'tier' }, 1] }, false] }],
    ['a disjunction of false members', { or: [{ '!': true }, { '===': ['a', 'b'] }, []] }],
    ['an empty conjunction', { and: [] }],
    ['a conditional whose branches are all false', { if: [{ var: 'flag' }, false, { '<': [2, 1] }] }],
    ['an unknown operator (it throws)', { nope: [1] }],
    ['null', null],
  ])('reports a rule whose condition is constant false: %s', (_name, when) => {
    const dead = findDeadRules([live, rule('dead', when)]);
    expect(dead).toEqual([expect.objectContaining({ ruleId: 'dead', kind: 'constant-false' })]);
  });

  it('reports a rule whose conditions contradict each other', () => {
    const strict = { and: [{ '===': [{ var: 'ground' }, 'a'] }, isDpo, { '===': [{ var: 'ground' }, 'b'] }] };
    const lists = { and: [{ in: [{ var: 'ground' }, ['a', 'b']] }, { in: [{ var: 'ground' }, ['c']] }] };
    const loose = { and: [{ in: [{ var: 'ground' }, ['a', 'b']] }, { '==': [{ var: 'ground' }, 'c'] }] };
    const dead = findDeadRules([rule('strict', strict), rule('lists', lists), rule('loose', loose)]);
    expect(dead.map((d) => [d.ruleId, d.kind])).toEqual([
      ['strict', 'contradiction'],
      ['lists', 'contradiction'],
      ['loose', 'contradiction'],
    ]);
  });

  it.each([
    ['true', true],
    ['a constant comparison', { '===': [1, 1] }],
    ['a disjunction with a true member', { or: [{ var: 'flag' }, { '!': false }] }],
    ['a non-empty list', [0]],
  ])('reports every rule after one that always matches: %s', (_name, when) => {
    const dead = findDeadRules([live, rule('always', when), rule('a', { var: 'flag' }), rule('b', isDpo, 'deny')]);
    expect(dead).toEqual([
      expect.objectContaining({ ruleId: 'a', kind: 'shadowed', by: ['always'] }),
      expect.objectContaining({ ruleId: 'b', kind: 'shadowed', by: ['always'] }),
    ]);
  });

  it('reports a rule with the same condition as an earlier one', () => {
    const when = { and: [isDpo, { in: [{ var: 'ground' }, ['a', 'b']] }] };
    const dead = findDeadRules([rule('first', when), rule('again', structuredClone(when), 'deny')]);
    expect(dead).toEqual([expect.objectContaining({ ruleId: 'again', kind: 'duplicate', by: ['first'] })]);
  });

  it('reports a rule narrower than an earlier one', () => {
    const dpoOnA = { and: [isDpo, { '===': [{ var: 'ground' }, 'a'] }] };
    const dead = findDeadRules([
      rule('dpo', isDpo),
      rule('dpo-on-a', dpoOnA, 'deny'),
      rule('tier', { '>': [{ var: 'tier' }, 2] }),
      rule('tier-or-dpo', { or: [dpoOnA, { and: [{ var: 'flag' }, { '>': [{ var: 'tier' }, 2] }] }] }, 'deny'),
    ]);
    expect(dead).toEqual([
      expect.objectContaining({ ruleId: 'dpo-on-a', kind: 'subsumed', by: ['dpo'] }),
      expect.objectContaining({ ruleId: 'tier-or-dpo', kind: 'subsumed', by: ['dpo', 'tier'] }),
    ]);
  });

  it('reports a rule whose allowed values are a subset of an earlier rule list', () => {
    const dead = findDeadRules([
      rule('ab', { in: [{ var: 'ground' }, ['a', 'b', 'c']] }),
      rule('a', { '===': [{ var: 'ground' }, 'a'] }, 'deny'),
    ]);
    expect(dead).toEqual([expect.objectContaining({ ruleId: 'a', kind: 'subsumed', by: ['ab'] })]);
  });

  it('reports a rule whose every allowed value is taken by several earlier rules together', () => {
    const dead = findDeadRules([
      rule('a', { '===': [{ var: 'ground' }, 'a'] }),
      rule('b', { '==': [{ var: 'ground' }, 'b'] }, 'deny'),
      rule('a-or-b', { in: [{ var: 'ground' }, ['a', 'b']] }),
    ]);
    expect(dead).toEqual([expect.objectContaining({ ruleId: 'a-or-b', kind: 'covered', by: ['a', 'b'] })]);
  });

  it('does not call a live rule dead', () => {
    const rules = [
      rule('dpo-on-a', { and: [isDpo, { '===': [{ var: 'ground' }, 'a'] }] }),
      rule('dpo', isDpo, 'deny'), // wider than the rule before it: live
      rule('a-or-c', { in: [{ var: 'ground' }, ['a', 'c']] }), // "c" is not taken
      rule('either', { or: [false, { var: 'flag' }] }),
      rule('not-false', { '!': { var: 'flag' } }),
      rule('loose', { '==': [{ var: 'tier' }, '1'] }), // 1 and "1" both match
      rule('after-throwing', { '>': [{ var: 'tier' }, 5] }),
      rule('missing-some', { missing_some: [1, ['ground']] }),
    ];
    expect(findDeadRules(rules)).toEqual([]);
  });

  it('does not treat a rule that may throw as one that always matches', () => {
    const rules = [rule('may-throw', { or: [{ missing_some: [1] }, true] }), rule('after', isDpo)];
    expect(findDeadRules(rules)).toEqual([]);
  });

  it('reports dead rules as errors of the policy document', () => {
    const findings = check(policyWith([rule('always', true), rule('never-reached', isDpo, 'deny')]));
    expect(findings).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'dead-rule',
        ruleId: 'never-reached',
        deadBecause: 'shadowed',
        message: 'rule "never-reached" can never fire: rule "always" before it matches every input',
      }),
    );
  });
});

describe('policy check: directories and test tables', () => {
  const policy = policyWith([
    rule('dpo-on-a', { and: [isDpo, { '===': [{ var: 'ground' }, 'a'] }] }),
    rule('tier', { '>=': [{ var: 'tier' }, 3] }),
    rule('flagged', { '===': [{ var: 'flag' }, true] }, 'deny'),
  ]);
  const tests = [
    { name: 'a DPO on ground a is allowed', facts: { roles: ['dpo'], ground: 'a' }, expect: 'allow', rule: 'dpo-on-a' },
    { name: 'tier 3 is allowed', facts: { tier: 3 }, expect: 'allow' },
    { name: 'a flag denies', facts: { flag: true }, expect: 'deny', rule: 'flagged' },
    { name: 'nothing else is allowed', facts: { roles: ['agent'], ground: 'a' }, expect: 'deny', rule: 'default' },
  ];

  it('passes a clean directory and counts its tests', () => {
    const dir = policyDir({ 'sample.json': policy, 'tests/sample.tests.json': tests });
    const report = checkPolicyDirectory(dir);
    expect(report.findings).toEqual([]);
    expect(report).toMatchObject({ policies: 1, tests: { passed: 4, failed: 0 } });
  });

  it('reports a failing test with what it expected and what it got', () => {
    const wrong = [...tests, { name: 'an agent is allowed', facts: { roles: ['agent'] }, expect: 'allow' }];
    const report = checkPolicyDirectory(policyDir({ 'sample.json': policy, 'tests/sample.tests.json': wrong }));
    expect(report.tests).toEqual({ passed: 4, failed: 1 });
    expect(report.findings).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'test-failed',
        test: 'an agent is allowed',
        message: 'test "an agent is allowed": expected allow, got deny by rule "default"',
      }),
    ]);
  });

  it('reports a test decided by another rule than the one it names', () => {
    const wrong = [...tests, { name: 'tier by dpo', facts: { tier: 4 }, expect: 'allow', rule: 'dpo-on-a' }];
    const report = checkPolicyDirectory(policyDir({ 'sample.json': policy, 'tests/sample.tests.json': wrong }));
    expect(codes(report.findings)).toEqual(['test-failed']);
  });

  it('reports test rows with undeclared facts, wrong types or undeclared outcomes', () => {
    const bad = [
      ...tests,
      { name: 'typo', facts: { role: ['dpo'] }, expect: 'allow' },
      { name: 'wrong type', facts: { tier: '3' }, expect: 'allow' },
      { name: 'odd outcome', facts: {}, expect: 'maybe' },
      { name: 'odd rule', facts: {}, expect: 'deny', rule: 'nope' },
    ];
    const report = checkPolicyDirectory(policyDir({ 'sample.json': policy, 'tests/sample.tests.json': bad }));
    expect(report.findings.map((f) => [f.code, f.test])).toEqual([
      ['test-invalid', 'typo'],
      ['test-invalid', 'wrong type'],
      ['test-invalid', 'odd outcome'],
      ['test-invalid', 'odd rule'],
    ]);
  });

  it('warns about a policy without tests and about rules no test decides', () => {
    const report = checkPolicyDirectory(
      policyDir({
        'sample.json': policy,
        'other.json': { ...policy, id: 'other' },
        'tests/sample.tests.json': [tests[0]],
      }),
    );
    expect(codes(report.findings)).toEqual([]);
    expect(report.findings.map((f) => [f.code, f.policyId, f.ruleId])).toEqual([
      ['rule-untested', 'sample', 'tier'],
      ['rule-untested', 'sample', 'flagged'],
      ['rule-untested', 'sample', 'default'],
      ['no-tests', 'other', undefined],
    ]);
  });

  it('reports invalid JSON naming the file, and keeps checking the other files', () => {
    const dir = policyDir({
      'broken.json': '{ "id": "broken", ',
      'sample.json': policy,
      'tests/sample.tests.json': tests,
    });
    const report = checkPolicyDirectory(dir);
    expect(report.findings).toEqual([
      expect.objectContaining({ code: 'invalid-json', file: `${dir}/broken.json`, severity: 'error' }),
    ]);
    expect(report.findings[0]?.message).toContain('broken.json is not valid JSON');
    expect(report.tests.passed).toBe(4);
  });

  it('reports duplicate policy ids, misnamed files and test tables for no policy', () => {
    const report = checkPolicyDirectory(
      policyDir({
        'sample.json': policy,
        'sample-copy.json': policy,
        'tests/sample.tests.json': tests,
        'tests/ghost.tests.json': [],
        'tests/notes.json': [],
      }),
    );
    // sample-copy.json sorts first, so it is the one the engine keeps, under a name that hides its tests.
    expect(report.findings.map((f) => [f.severity, f.code])).toEqual([
      ['warning', 'file-name'],
      ['error', 'duplicate-policy'],
      ['error', 'orphan-tests'],
      ['error', 'orphan-tests'],
    ]);
  });

  it('reports a directory it cannot read', () => {
    const report = checkPolicyDirectory('/nonexistent/policies');
    expect(report.findings).toEqual([expect.objectContaining({ code: 'unreadable', file: '/nonexistent/policies' })]);
  });
});

describe("the repository's policies", () => {
  const report = checkPolicyDirectory(POLICIES_DIR);

  it('check clean: no errors and no warnings', () => {
    expect(report.findings).toEqual([]);
  });

  it('pass their test tables, which cover every policy', () => {
    expect(report.tests.failed).toBe(0);
    expect(report.tests.passed).toBeGreaterThanOrEqual(100);
    expect(report.policies).toBeGreaterThanOrEqual(8);
  });
});
