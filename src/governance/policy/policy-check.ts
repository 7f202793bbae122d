/**
 * `lethe policy check`: validates the policy documents in `policies/` (schema, unknown variables, rules that
 * can never fire, a default that is not the most restrictive outcome) and runs the test tables kept beside
 * them in `policies/tests/<policy-id>.tests.json`. CI runs it; the engine loads the same files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { evaluatePolicy, validateFacts, type Facts, type PolicyDocument, type PolicyRule } from './evaluate.js';
import { approximateMs, isIsoDuration } from './iso-duration.js';
import {
  asOperation,
  assignments,
  implies,
  isTautology,
  mayThrow,
  pinnedValues,
  scanLogic,
  truthOf,
} from './json-logic-analysis.js';

export type FindingCode =
  | 'unreadable'
  | 'invalid-json'
  | 'schema'
  | 'duplicate-policy'
  | 'file-name'
  | 'invalid-logic'
  | 'unknown-variable'
  | 'unused-variable'
  | 'dead-rule'
  | 'default-not-restrictive'
  | 'no-tests'
  | 'orphan-tests'
  | 'test-invalid'
  | 'test-failed'
  | 'rule-untested';

/** One problem the checker found; `error`s fail the check, `warning`s do not. */
export interface PolicyFinding {
  /** The policy's id, or null when the file is not a readable policy. */
  policyId: string | null;
  file: string;
  severity: 'error' | 'warning';
  code: FindingCode;
  message: string;
  ruleId?: string;
  /** The test case, for test findings. */
  test?: string;
  /** Why a rule is dead, for `dead-rule` findings. */
  deadBecause?: DeadRuleKind;
}

/** Codes that mean the input could not be read at all (the CLI's usage exit), rather than a policy defect. */
export const INPUT_FINDING_CODES: ReadonlySet<FindingCode> = new Set(['unreadable', 'invalid-json']);

/** The outcomes that, when a policy declares them, must be its default (default deny). */
export const RESTRICTIVE_OUTCOMES = ['deny', 'reject', 'high'] as const;

const VARIABLE_TYPES = ['string', 'number', 'boolean', 'string[]'];
const POLICY_KEYS = ['id', 'version', 'description', 'variables', 'outcomes', 'default', 'rules'];
const RULE_KEYS = ['id', 'outcome', 'when', 'reason'];
const TEST_KEYS = ['name', 'facts', 'expect', 'rule'];
const POLICY_ID = /^[a-z0-9][a-z0-9-]*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** The result of checking one document: the findings, and the policy when it is sound enough to evaluate. */
export interface DocumentCheck {
  policy: PolicyDocument | null;
  findings: PolicyFinding[];
}

/** Checks one parsed policy document. Pure: `file` only labels the findings. */
export function checkPolicyDocument(doc: unknown, file: string): DocumentCheck {
  const findings: PolicyFinding[] = [];
  const policyId = isRecord(doc) && nonEmptyString(doc.id) ? doc.id : null;
  const add = (severity: PolicyFinding['severity'], code: FindingCode, message: string, ruleId?: string): void => {
    findings.push({ policyId, file, severity, code, message, ...(ruleId === undefined ? {} : { ruleId }) });
  };

  if (!isRecord(doc)) {
    add('error', 'schema', 'a policy document must be a JSON object');
    return { policy: null, findings };
  }
  for (const key of Object.keys(doc)) {
    if (!POLICY_KEYS.includes(key)) add('warning', 'schema', `unknown field "${key}" (ignored by the evaluator)`);
  }
  if (!nonEmptyString(doc.id) || !POLICY_ID.test(doc.id)) {
    add('error', 'schema', 'id: required, lower-case letters, digits and "-"');
  }
  if (typeof doc.version !== 'number' || !Number.isInteger(doc.version) || doc.version < 1) {
    add('error', 'schema', 'version: required, a whole number ≥ 1 (decisions record it)');
  }
  if (doc.description === undefined) {
    add('warning', 'schema', 'description: missing (say what the policy decides and what each variable means)');
  } else if (typeof doc.description !== 'string') {
    add('error', 'schema', 'description: must be a string');
  }

  const variables = isRecord(doc.variables) ? doc.variables : null;
  if (!variables) {
    add('error', 'schema', 'variables: required, an object of name → type');
  } else {
    for (const [name, type] of Object.entries(variables)) {
      if (typeof type !== 'string' || !VARIABLE_TYPES.includes(type)) {
        add('error', 'schema', `variables.${name}: type must be one of ${VARIABLE_TYPES.join(', ')}`);
      }
      if (name.length === 0 || name.includes('.')) {
        add('error', 'schema', `variables: "${name}" is not a usable name (no dots, not empty)`);
      }
    }
  }

  let outcomes: string[] | null = null;
  if (!Array.isArray(doc.outcomes) || doc.outcomes.length === 0 || !doc.outcomes.every(nonEmptyString)) {
    add('error', 'schema', 'outcomes: required, a non-empty array of strings');
  } else {
    outcomes = doc.outcomes;
    const repeated = outcomes.filter((o, i) => outcomes!.indexOf(o) !== i);
    if (repeated.length > 0) add('error', 'schema', `outcomes: "${repeated[0]}" is listed twice`);
  }

  if (!nonEmptyString(doc.default)) {
    add('error', 'schema', 'default: required, the outcome when no rule matches');
  } else if (outcomes && !outcomes.includes(doc.default)) {
    add('error', 'schema', `default: "${doc.default}" is not one of the declared outcomes (${outcomes.join(', ')})`);
  } else if (outcomes) {
    const problem = restrictiveDefaultProblem(outcomes, doc.default);
    if (problem) add('error', 'default-not-restrictive', problem);
  }

  let rulesOk = Array.isArray(doc.rules);
  if (!Array.isArray(doc.rules)) {
    add('error', 'schema', 'rules: required, an array (first match wins)');
  } else {
    const seen = new Set<string>();
    doc.rules.forEach((rule: unknown, index) => {
      const where = `rules[${index}]`;
      if (!isRecord(rule)) {
        add('error', 'schema', `${where}: must be an object`);
        rulesOk = false;
        return;
      }
      const ruleId = nonEmptyString(rule.id) ? rule.id : undefined;
      const label = ruleId === undefined ? where : `rule "${ruleId}"`;
      for (const key of Object.keys(rule)) {
        if (!RULE_KEYS.includes(key)) add('warning', 'schema', `${label}: unknown field "${key}"`, ruleId);
      }
      if (ruleId === undefined) {
        add('error', 'schema', `${where}.id: required, a non-empty string (decisions record it)`);
        rulesOk = false;
      } else if (seen.has(ruleId)) {
        add('error', 'schema', `${label}: the id is used by an earlier rule`, ruleId);
      } else {
        seen.add(ruleId);
      }
      if (!nonEmptyString(rule.outcome)) {
        add('error', 'schema', `${label}: outcome is required`, ruleId);
        rulesOk = false;
      } else if (outcomes && !outcomes.includes(rule.outcome)) {
        add('error', 'schema', `${label}: outcome "${rule.outcome}" is not declared in outcomes`, ruleId);
      }
      if (!('when' in rule)) {
        add('error', 'schema', `${label}: "when" (a json-logic condition) is required`, ruleId);
        rulesOk = false;
      }
      if (rule.reason === undefined) {
        add('warning', 'schema', `${label}: no reason (decisions would record only the rule id)`, ruleId);
      } else if (typeof rule.reason !== 'string') {
        add('error', 'schema', `${label}: reason must be a string`, ruleId);
      }
    });
  }

  if (!rulesOk || !Array.isArray(doc.rules)) return { policy: null, findings };
  const rules = doc.rules as PolicyRule[];

  if (variables) {
    const used = new Set<string>();
    for (const rule of rules) {
      const scan = scanLogic(rule.when);
      for (const problem of scan.problems) add('error', 'invalid-logic', `rule "${rule.id}": ${problem}`, rule.id);
      for (const read of scan.reads) {
        used.add(read.variable);
        if (!Object.hasOwn(variables, read.variable)) {
          const where = read.path === read.variable ? '' : ` (in "${read.path}")`;
          const declared = Object.keys(variables).join(', ') || 'none';
          add(
            'error',
            'unknown-variable',
            `rule "${rule.id}": reads "${read.variable}"${where}, which is not declared in variables (declared: ${declared})`,
            rule.id,
          );
        }
      }
    }
    for (const name of Object.keys(variables)) {
      if (!used.has(name)) add('warning', 'unused-variable', `variable "${name}" is declared but no rule reads it`);
    }
  }

  for (const dead of findDeadRules(rules)) {
    findings.push({
      policyId,
      file,
      severity: 'error',
      code: 'dead-rule',
      message: `rule "${dead.ruleId}" can never fire: ${dead.message}`,
      ruleId: dead.ruleId,
      deadBecause: dead.kind,
    });
  }

  const sound = !findings.some((f) => f.severity === 'error' && f.code === 'schema');
  return { policy: sound ? (doc as unknown as PolicyDocument) : null, findings };
}

/**
 * Whether the default is the most restrictive outcome, where that can be told from the outcomes alone: a
 * conventional restrictive outcome (`deny`, `reject`, `high`) must be the default, and among ISO 8601
 * durations (retention periods, review deadlines) the shortest must be.
 */
export function restrictiveDefaultProblem(outcomes: readonly string[], defaultOutcome: string): string | null {
  const restrictive = RESTRICTIVE_OUTCOMES.find((o) => outcomes.includes(o));
  if (restrictive !== undefined && defaultOutcome !== restrictive) {
    return `default is "${defaultOutcome}", but "${restrictive}" is declared: the default must be the most restrictive outcome`;
  }
  if (outcomes.length > 0 && outcomes.every(isIsoDuration)) {
    const shortest = [...outcomes].sort((a, b) => approximateMs(a) - approximateMs(b))[0]!;
    if (approximateMs(defaultOutcome) > approximateMs(shortest)) {
      return `default is "${defaultOutcome}", but "${shortest}" is shorter: among durations the shortest is the most restrictive`;
    }
  }
  return null;
}

/** Why a rule can never fire. */
export type DeadRuleKind = 'constant-false' | 'contradiction' | 'shadowed' | 'duplicate' | 'subsumed' | 'covered';

export interface DeadRule {
  ruleId: string;
  kind: DeadRuleKind;
  /** The earlier rules that take every case this rule could match. */
  by: string[];
  message: string;
}

/**
 * The rules that can never decide (first match wins). Sound: a rule is reported only when it is proved that
 * no facts make it the first truthy rule.
 */
export function findDeadRules(rules: readonly PolicyRule[]): DeadRule[] {
  const dead: DeadRule[] = [];
  rules.forEach((rule, index) => {
    const earlier = rules.slice(0, index);
    const found = whyDead(rule.when, earlier);
    if (found) dead.push({ ruleId: rule.id, ...found });
  });
  return dead;
}

function whyDead(when: unknown, earlier: readonly PolicyRule[]): Omit<DeadRule, 'ruleId'> | null {
  if (truthOf(when) === 'falsy') {
    return { kind: 'constant-false', by: [], message: 'its condition is false for every input' };
  }
  const pins = pinnedValues(when);
  const all = pins.size > 0 ? assignments(pins) : null;
  const allowed = [...pins]
    .map(([p, values]) => `"${p}" ∈ {${values.map((v) => JSON.stringify(v)).join(', ')}}`)
    .join(', ');
  for (const [path, values] of pins) {
    if (values.length === 0) {
      return {
        kind: 'contradiction',
        by: [],
        message: `its conditions require "${path}" to equal values that exclude each other`,
      };
    }
  }
  if (all && all.every((a) => truthOf(when, a) === 'falsy')) {
    return { kind: 'contradiction', by: [], message: `no value its conditions allow (${allowed}) satisfies it` };
  }
  const always = earlier.find((e) => isTautology(e.when));
  if (always) {
    return { kind: 'shadowed', by: [always.id], message: `rule "${always.id}" before it matches every input` };
  }
  const same = earlier.find((e) => isDeepStrictEqual(e.when, when));
  if (same) {
    return { kind: 'duplicate', by: [same.id], message: `rule "${same.id}" before it has the same condition` };
  }
  const takers = takenBy(when, earlier, 0);
  if (takers) {
    const names = takers.map((id) => `"${id}"`).join(', ');
    return {
      kind: 'subsumed',
      by: takers,
      message: `whenever it matches, ${takers.length === 1 ? 'rule' : 'one of the rules'} ${names} before it matches too`,
    };
  }
  if (all) {
    const by = new Set<string>();
    const everyCaseTaken = all.every((a) => {
      if (truthOf(when, a) === 'falsy') return true;
      const taker = earlier.find((e) => !mayThrow(e.when) && truthOf(e.when, a) === 'truthy');
      if (taker) by.add(taker.id);
      return taker !== undefined;
    });
    if (everyCaseTaken) {
      const names = [...by].map((id) => `"${id}"`).join(', ');
      return {
        kind: 'covered',
        by: [...by],
        message: `every value its conditions allow (${allowed}) is taken by an earlier rule (${names})`,
      };
    }
  }
  return null;
}

/**
 * The earlier rules of which one surely matches whenever `when` does, or null when that is not proved: one
 * rule implied by the whole condition, by one of its conjuncts, or — for a disjunction — one per disjunct.
 */
function takenBy(when: unknown, earlier: readonly PolicyRule[], depth: number): string[] | null {
  const single = earlier.find((e) => implies(when, e.when));
  if (single) return [single.id];
  const operation = asOperation(when);
  if (!operation || operation.args.length === 0 || depth > 8) return null;
  if (operation.op === 'and' || (operation.op === '!!' && operation.args.length === 1)) {
    for (const conjunct of operation.op === 'and' ? operation.args : operation.args.slice(0, 1)) {
      const found = takenBy(conjunct, earlier, depth + 1);
      if (found) return found;
    }
    return null;
  }
  if (operation.op === 'or') {
    const ids = new Set<string>();
    for (const disjunct of operation.args) {
      const found = takenBy(disjunct, earlier, depth + 1);
      if (!found) return null;
      for (const id of found) ids.add(id);
    }
    return [...ids];
  }
  return null;
}

/** One row of a policy test table. */
export interface PolicyTestCase {
  name: string;
  facts: Facts;
  /** The outcome the policy must return. */
  expect: string;
  /** Optionally, the rule that must decide (`default` for the default). */
  rule?: string;
}

/** What running a test table found. */
export interface TestRun {
  findings: PolicyFinding[];
  passed: number;
  failed: number;
  /** The rules (and `default`) that decided at least one case. */
  decidedBy: Set<string>;
}

/** Runs a parsed test table through `evaluatePolicy`. Pure: `file` only labels the findings. */
export function runPolicyTests(policy: PolicyDocument, table: unknown, file: string): TestRun {
  const run: TestRun = { findings: [], passed: 0, failed: 0, decidedBy: new Set() };
  const add = (severity: PolicyFinding['severity'], code: FindingCode, message: string, test?: string): void => {
    run.findings.push({ policyId: policy.id, file, severity, code, message, ...(test === undefined ? {} : { test }) });
  };
  if (!Array.isArray(table)) {
    add('error', 'test-invalid', 'a test table must be a JSON array of { name, facts, expect }');
    return run;
  }
  const ruleIds = new Set([...policy.rules.map((r) => r.id), 'default']);
  const names = new Set<string>();
  table.forEach((row: unknown, index) => {
    const name = isRecord(row) && nonEmptyString(row.name) ? row.name : `#${index + 1}`;
    const problems: string[] = [];
    if (!isRecord(row)) {
      add('error', 'test-invalid', `test ${name}: must be an object`, name);
      return;
    }
    if (!nonEmptyString(row.name)) problems.push('name: required');
    else if (names.has(row.name)) problems.push('name: used by an earlier test');
    names.add(name);
    for (const key of Object.keys(row)) {
      if (!TEST_KEYS.includes(key)) add('warning', 'test-invalid', `test "${name}": unknown field "${key}"`, name);
    }
    if (!isRecord(row.facts)) problems.push('facts: required, an object');
    else problems.push(...validateFacts(policy, row.facts).map((p) => `facts.${p}`));
    if (!nonEmptyString(row.expect)) problems.push('expect: required, an outcome');
    else if (!policy.outcomes.includes(row.expect)) problems.push(`expect: "${row.expect}" is not a declared outcome`);
    if (row.rule !== undefined && (typeof row.rule !== 'string' || !ruleIds.has(row.rule))) {
      problems.push(`rule: "${String(row.rule)}" is not a rule of this policy (or "default")`);
    }
    if (problems.length > 0) {
      add('error', 'test-invalid', `test "${name}": ${problems.join('; ')}`, name);
      return;
    }
    const testCase = row as unknown as PolicyTestCase;
    const decision = evaluatePolicy(policy, testCase.facts);
    run.decidedBy.add(decision.ruleId);
    const wrongRule = testCase.rule !== undefined && decision.ruleId !== testCase.rule;
    if (decision.outcome !== testCase.expect || wrongRule) {
      run.failed += 1;
      const expected = testCase.rule === undefined ? testCase.expect : `${testCase.expect} by rule "${testCase.rule}"`;
      add(
        'error',
        'test-failed',
        `test "${name}": expected ${expected}, got ${decision.outcome} by rule "${decision.ruleId}"`,
        name,
      );
    } else {
      run.passed += 1;
    }
  });
  return run;
}

/** The whole check of a policy directory. */
export interface PolicyCheckReport {
  dir: string;
  /** Policy documents checked (readable or not). */
  policies: number;
  tests: { passed: number; failed: number };
  findings: PolicyFinding[];
}

export const TESTS_SUBDIR = 'tests';
const TESTS_SUFFIX = '.tests.json';

type Parsed = { ok: true; value: unknown } | { ok: false; finding: PolicyFinding };

function readJson(file: string, policyId: string | null): Parsed {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'read failed';
    return {
      ok: false,
      finding: { policyId, file, severity: 'error', code: 'unreadable', message: `cannot read ${file} (${reason})` },
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const message = `${file} is not valid JSON: ${(error as Error).message}`;
    return { ok: false, finding: { policyId, file, severity: 'error', code: 'invalid-json', message } };
  }
}

function jsonFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
    .map((entry) => entry.name)
    .sort();
}

/** Checks every `*.json` policy in `dir` and runs the tables in `dir/tests/`. Reads files; never writes. */
export function checkPolicyDirectory(dir: string): PolicyCheckReport {
  const report: PolicyCheckReport = { dir, policies: 0, tests: { passed: 0, failed: 0 }, findings: [] };
  let names: string[];
  try {
    names = jsonFiles(dir);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'read failed';
    report.findings.push({
      policyId: null,
      file: dir,
      severity: 'error',
      code: 'unreadable',
      message: `cannot read the policy directory ${dir} (${reason})`,
    });
    return report;
  }

  const byId = new Map<string, { policy: PolicyDocument | null; file: string }>();
  for (const name of names) {
    const file = path.join(dir, name);
    report.policies += 1;
    const parsed = readJson(file, null);
    if (!parsed.ok) {
      report.findings.push(parsed.finding);
      continue;
    }
    const { policy, findings } = checkPolicyDocument(parsed.value, file);
    report.findings.push(...findings);
    const id = isRecord(parsed.value) && nonEmptyString(parsed.value.id) ? parsed.value.id : null;
    if (id === null) continue;
    const previous = byId.get(id);
    if (previous) {
      report.findings.push({
        policyId: id,
        file,
        severity: 'error',
        code: 'duplicate-policy',
        message: `policy id "${id}" is also used by ${previous.file} (the engine would load only one of them)`,
      });
      continue;
    }
    byId.set(id, { policy, file });
    if (name !== `${id}.json`) {
      report.findings.push({
        policyId: id,
        file,
        severity: 'warning',
        code: 'file-name',
        message: `policy "${id}" is in ${name}; name the file ${id}.json so its tests are found beside it`,
      });
    }
  }

  const testsDir = path.join(dir, TESTS_SUBDIR);
  const tested = new Set<string>();
  const testFiles = fs.existsSync(testsDir) ? jsonFiles(testsDir) : [];
  for (const name of testFiles) {
    const file = path.join(testsDir, name);
    const id = name.endsWith(TESTS_SUFFIX) ? name.slice(0, -TESTS_SUFFIX.length) : null;
    const target = id === null ? undefined : byId.get(id);
    if (id === null || !target) {
      report.findings.push({
        policyId: id,
        file,
        severity: 'error',
        code: 'orphan-tests',
        message:
          id === null
            ? `${name}: test tables are named <policy-id>${TESTS_SUFFIX}`
            : `${name}: there is no policy "${id}" in ${dir}`,
      });
      continue;
    }
    tested.add(id);
    const parsed = readJson(file, id);
    if (!parsed.ok) {
      report.findings.push(parsed.finding);
      continue;
    }
    if (!target.policy) continue; // the policy's own findings explain why it cannot be run
    const run = runPolicyTests(target.policy, parsed.value, file);
    report.findings.push(...run.findings);
    report.tests.passed += run.passed;
    report.tests.failed += run.failed;
    const reachable = target.policy.rules.some((r) => isTautology(r.when)) ? [] : ['default'];
    const dead = new Set(findDeadRules(target.policy.rules).map((d) => d.ruleId));
    for (const ruleId of [...target.policy.rules.map((r) => r.id), ...reachable]) {
      if (dead.has(ruleId) || run.decidedBy.has(ruleId)) continue;
      report.findings.push({
        policyId: id,
        file,
        severity: 'warning',
        code: 'rule-untested',
        message: ruleId === 'default' ? 'no test reaches the default' : `no test is decided by rule "${ruleId}"`,
        ruleId,
      });
    }
  }
  for (const [id, { file }] of byId) {
    if (tested.has(id)) continue;
    report.findings.push({
      policyId: id,
      file,
      severity: 'warning',
      code: 'no-tests',
      message: `no test table (${path.join(testsDir, `${id}${TESTS_SUFFIX}`)})`,
    });
  }
  return report;
}
