/**
 * The pure policy evaluator: json-logic rules, first match wins, default deny. No I/O, so workflows and
 * activities both import it.
 */
import jsonLogic from 'json-logic-js';

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
