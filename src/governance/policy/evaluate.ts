/**
 * The pure policy evaluator: json-logic rules, first match wins, default deny. No I/O, so workflows and
 * activities both import it.
 */
import jsonLogic from 'json-logic-js';

export { addIsoDuration, isoDurationToMs, parseIsoDuration, type IsoDuration } from './iso-duration.js';

/** A versioned policy document from `policies/`. */
export interface PolicyDocument {
  id: string;
  version: number;
  description?: string;
  /** The facts the rules may read, with their types; anything else is an unknown variable. */
  variables: Record<string, 'string' | 'number' | 'boolean' | 'string[]'>;
  /** Outcomes this policy may produce. */
  outcomes: string[];
  /** Returned when no rule matches; must be the most restrictive outcome (default deny). */
  default: string;
  rules: PolicyRule[];
}

export interface PolicyRule {
  id: string;
  outcome: string;
  /** json-logic condition over the facts. */
  when: unknown;
  reason?: string;
}

export interface PolicyDecision {
  policyId: string;
  policyVersion: number;
  outcome: string;
  /** The rule that decided, or `default`. */
  ruleId: string;
  reason: string;
}

export type Facts = Record<string, string | number | boolean | string[] | null | undefined>;

export function evaluatePolicy(policy: PolicyDocument, facts: Facts): PolicyDecision {
  for (const rule of policy.rules) {
    let matched = false;
    try {
      matched = jsonLogic.truthy(jsonLogic.apply(rule.when as jsonLogic.RulesLogic, facts));
    } catch {
      matched = false; // a rule that cannot be evaluated never allows anything
    }
    if (matched) {
      return {
        policyId: policy.id,
        policyVersion: policy.version,
        outcome: rule.outcome,
        ruleId: rule.id,
        reason: rule.reason ?? rule.id,
      };
    }
  }
  return {
    policyId: policy.id,
    policyVersion: policy.version,
    outcome: policy.default,
    ruleId: 'default',
    reason: 'no rule matched (default)',
  };
}

/**
 * Checks facts against the policy's declared variables: names it does not declare and values of the wrong
 * type. A misspelt fact is otherwise silent (the rule reads null and the default applies), so callers wiring a
 * policy in should assert this is empty. `null` and `undefined` stand for an absent fact and are accepted.
 */
export function validateFacts(policy: PolicyDocument, facts: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(facts)) {
    const type = Object.hasOwn(policy.variables, name) ? policy.variables[name] : undefined;
    if (type === undefined) {
      problems.push(`${name}: not a variable of policy "${policy.id}"`);
      continue;
    }
    if (value === null || value === undefined) continue;
    const ok =
      type === 'string[]'
        ? Array.isArray(value) && value.every((v) => typeof v === 'string')
        : type === 'number'
          ? typeof value === 'number' && Number.isFinite(value)
          : typeof value === type;
    if (!ok) problems.push(`${name}: expected ${type}, got ${Array.isArray(value) ? 'array' : typeof value}`);
  }
  return problems;
}
