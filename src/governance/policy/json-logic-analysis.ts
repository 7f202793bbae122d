/**
 * Static analysis of json-logic conditions, for `lethe policy check`: which facts a condition reads, which
 * operators json-logic-js does not know, and a small abstract evaluator (constant folding plus substitution of
 * variables pinned to finite sets) that proves a rule can never fire.
 *
 * Every "never"/"always" answer here is sound against json-logic-js 2.x as `evaluatePolicy` runs it: a rule
 * that throws is treated as not matching, so an "always matches" claim also requires that nothing in the
 * condition can throw. When in doubt the answer is "unknown", and an unknown rule is never reported as dead.
 */
import jsonLogic from 'json-logic-js';
import { isDeepStrictEqual } from 'node:util';

/** The operators json-logic-js 2.x implements; anything else throws when evaluated. */
export const KNOWN_OPERATORS: ReadonlySet<string> = new Set([
  '==',
  '===',
  '!=',
  '!==',
  '>',
  '>=',
  '<',
  '<=',
  '!!',
  '!',
  '%',
  'log',
  'in',
  'cat',
  'substr',
  '+',
  '*',
  '-',
  '/',
  'min',
  'max',
  'merge',
  'var',
  'missing',
  'missing_some',
  'if',
  '?:',
  'and',
  'or',
  'filter',
  'map',
  'reduce',
  'all',
  'none',
  'some',
]);

/** Operators whose second argument runs once per element, with the element (not the facts) as its data. */
const SCOPED_OPERATORS: ReadonlySet<string> = new Set(['filter', 'map', 'reduce', 'all', 'none', 'some']);

/** `missing_some` reads `options.length` of an argument that may be absent; unknown operators always throw. */
const MAY_THROW_OPERATORS: ReadonlySet<string> = new Set(['missing_some']);

type Primitive = string | number | boolean | null;

/** An operation node: `{ op: args }` with exactly one key. */
interface Operation {
  op: string;
  args: unknown[];
}

/** json-logic's own test for an operation: a non-array object with exactly one key. */
export function asOperation(node: unknown): Operation | null {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return null;
  const keys = Object.keys(node);
  if (keys.length !== 1) return null;
  const op = keys[0]!;
  const raw = (node as Record<string, unknown>)[op];
  // json-logic's unary sugar: { "!": x } is { "!": [x] }.
  return { op, args: Array.isArray(raw) ? raw : [raw] };
}

function isPrimitive(value: unknown): value is Primitive {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** A fact the condition reads: the full `var` path and its first segment (the declared variable). */
export interface VariableRead {
  path: string;
  variable: string;
}

/** What a scan of a condition found. */
export interface LogicScan {
  reads: VariableRead[];
  /** Constructs that are not json-logic as `evaluatePolicy` runs it, or whose reads cannot be known. */
  problems: string[];
}

/** Lists the facts a condition reads (not the element-scoped reads inside `map`, `some`…) and its problems. */
export function scanLogic(condition: unknown): LogicScan {
  const reads: VariableRead[] = [];
  const problems: string[] = [];
  const read = (path: string): void => {
    reads.push({ path, variable: path.split('.')[0]! });
  };
  const readKeys = (keys: unknown, op: string): void => {
    for (const key of Array.isArray(keys) ? keys : [keys]) {
      if (typeof key === 'string' || typeof key === 'number') read(String(key));
      else problems.push(`"${op}" with a computed key: the facts it reads cannot be checked`);
    }
  };

  const walk = (node: unknown, scoped: boolean): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, scoped);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const operation = asOperation(node);
    if (!operation) {
      const count = Object.keys(node).length;
      problems.push(
        `an object with ${count} keys is data, not an operation (json-logic returns it unevaluated, and it is truthy)`,
      );
      return;
    }
    const { op, args } = operation;
    if (!KNOWN_OPERATORS.has(op)) {
      problems.push(`unknown operator "${op}" (evaluating it throws, so the rule never matches)`);
      return;
    }
    if (op === 'var') {
      if (scoped) return; // reads the current element, not a fact
      const [path, fallback] = args;
      if (path === undefined || path === null || path === '') {
        problems.push('{"var": ""} reads the whole facts object');
      } else if (typeof path === 'string' || typeof path === 'number') {
        read(String(path));
      } else {
        problems.push('"var" with a computed name: the fact it reads cannot be checked');
      }
      walk(fallback, scoped);
      return;
    }
    if (op === 'missing' && !scoped) {
      readKeys(args.length === 1 && Array.isArray(args[0]) ? args[0] : args, op);
      return;
    }
    if (op === 'missing_some' && !scoped) {
      walk(args[0], scoped);
      readKeys(args[1], op);
      return;
    }
    if (SCOPED_OPERATORS.has(op)) {
      walk(args[0], scoped);
      walk(args[1], true);
      walk(args.slice(2), scoped);
      return;
    }
    walk(args, scoped);
  };

  walk(condition, false);
  return { reads, problems };
}

/** Whether evaluating the node may throw: an unknown operator or `missing_some` anywhere in it. */
export function mayThrow(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(mayThrow);
  const operation = asOperation(node);
  if (!operation) return false;
  if (!KNOWN_OPERATORS.has(operation.op) || MAY_THROW_OPERATORS.has(operation.op)) return true;
  return operation.args.some(mayThrow);
}

/**
 * What is known of a condition's value over all facts: `truthy` — every evaluation that does not throw is
 * truthy; `falsy` — every evaluation that does not throw is falsy; `unknown` otherwise.
 */
export type Truth = 'truthy' | 'falsy' | 'unknown';

/** Pinned values for plain `{"var": path}` reads (no default), keyed by path. */
export type Assignment = ReadonlyMap<string, Primitive>;

const NO_ASSIGNMENT: Assignment = new Map();

/** The path of a plain fact read `{"var": "x"}` / `{"var": ["x"]}`, without a default; otherwise null. */
function plainVarPath(node: unknown): string | null {
  const operation = asOperation(node);
  if (!operation || operation.op !== 'var' || operation.args.length !== 1) return null;
  const [path] = operation.args;
  if (typeof path === 'number') return String(path);
  return typeof path === 'string' && path !== '' ? path : null;
}

/** Replaces pinned fact reads by their values, outside element-scoped logic (where `var` reads the element). */
function substitute(node: unknown, assignment: Assignment): unknown {
  if (assignment.size === 0) return node;
  if (Array.isArray(node)) return node.map((item) => substitute(item, assignment));
  const operation = asOperation(node);
  if (!operation) return node;
  const path = plainVarPath(node);
  if (path !== null && assignment.has(path)) return assignment.get(path);
  const { op, args } = operation;
  if (SCOPED_OPERATORS.has(op)) {
    return { [op]: [substitute(args[0], assignment), args[1], ...args.slice(2).map((a) => substitute(a, assignment))] };
  }
  return { [op]: args.map((a) => substitute(a, assignment)) };
}

/** A node is closed when its value does not depend on the facts and it can be evaluated without effects. */
function isClosed(node: unknown): boolean {
  if (Array.isArray(node)) return node.every(isClosed);
  const operation = asOperation(node);
  if (!operation) return true; // a literal
  const { op, args } = operation;
  if (!KNOWN_OPERATORS.has(op) || op === 'log' || op === 'var' || op === 'missing' || op === 'missing_some') {
    return false;
  }
  // The scoped part reads elements only; it must merely be free of effects.
  if (SCOPED_OPERATORS.has(op)) return isClosed(args[0]) && isClosed(args.slice(2)) && !usesOperator(args[1], 'log');
  return args.every(isClosed);
}

function usesOperator(node: unknown, name: string): boolean {
  if (Array.isArray(node)) return node.some((item) => usesOperator(item, name));
  const operation = asOperation(node);
  return operation !== null && (operation.op === name || operation.args.some((a) => usesOperator(a, name)));
}

function combine(truths: Truth[]): Truth {
  if (truths.length > 0 && truths.every((t) => t === 'truthy')) return 'truthy';
  if (truths.every((t) => t === 'falsy')) return 'falsy';
  return 'unknown';
}

/** The abstract truth of a condition, with the given fact reads pinned. */
export function truthOf(condition: unknown, assignment: Assignment = NO_ASSIGNMENT): Truth {
  return fold(substitute(condition, assignment));
}

function fold(node: unknown): Truth {
  if (isClosed(node)) {
    try {
      return jsonLogic.truthy(jsonLogic.apply(node as jsonLogic.RulesLogic, {})) ? 'truthy' : 'falsy';
    } catch {
      return 'falsy'; // it always throws: no evaluation returns, so none is truthy
    }
  }
  // Not closed: a non-empty array literal is truthy whatever its elements are (it is closed when empty).
  if (Array.isArray(node)) return 'truthy';
  const operation = asOperation(node);
  if (!operation) return 'unknown';
  const { op, args } = operation;
  if (!KNOWN_OPERATORS.has(op)) return 'falsy'; // it always throws
  switch (op) {
    case 'and': {
      const truths = args.map(fold);
      if (truths.includes('falsy')) return 'falsy';
      return truths.length > 0 && truths.every((t) => t === 'truthy') ? 'truthy' : 'unknown';
    }
    case 'or': {
      const truths = args.map(fold);
      if (truths.includes('truthy')) return 'truthy';
      return truths.every((t) => t === 'falsy') ? 'falsy' : 'unknown';
    }
    case '!': {
      const t = fold(args[0]);
      return t === 'truthy' ? 'falsy' : t === 'falsy' ? 'truthy' : 'unknown';
    }
    case '!!':
      return fold(args[0]);
    case 'if':
    case '?:': {
      const outcomes: Truth[] = [];
      let i = 0;
      for (; i < args.length - 1; i += 2) {
        const condition = fold(args[i]);
        if (condition !== 'falsy') outcomes.push(fold(args[i + 1]));
        if (condition === 'truthy') return combine(outcomes);
      }
      outcomes.push(args.length === i + 1 ? fold(args[i]) : 'falsy'); // the else branch, or null
      return combine(outcomes);
    }
    default:
      return 'unknown';
  }
}

/** Whether the condition matches for every facts object: always truthy and never throws. */
export function isTautology(condition: unknown): boolean {
  return truthOf(condition) === 'truthy' && !mayThrow(condition);
}

function conjuncts(node: unknown): unknown[] {
  const operation = asOperation(node);
  if (operation && operation.op === 'and' && operation.args.length > 0) return operation.args.flatMap(conjuncts);
  if (operation && operation.op === '!!' && operation.args.length === 1) return conjuncts(operation.args[0]);
  return [node];
}

/** Strictly equal values, with 0 and -0 kept apart (they compare equal but divide differently). */
function withSignedZero(values: Primitive[]): Primitive[] {
  const out: Primitive[] = [];
  for (const v of values) {
    if (!out.some((o) => Object.is(o, v))) out.push(v);
    if (v === 0 && !out.some((o) => Object.is(o, -v))) out.push(-v);
  }
  return out;
}

/**
 * The finite sets of values fact reads must take for the condition to be truthy, from its top-level
 * conjuncts `{"===": [{"var": x}, c]}` and `{"in": [{"var": x}, [c1, c2…]]}` (both strict comparisons).
 * An empty set means no value satisfies the condition.
 */
export function pinnedValues(condition: unknown): Map<string, Primitive[]> {
  const pins = new Map<string, Primitive[]>();
  const pin = (path: string, values: Primitive[]): void => {
    const previous = pins.get(path);
    const next = withSignedZero(values);
    pins.set(path, previous ? previous.filter((p) => next.includes(p)) : next);
  };
  for (const conjunct of conjuncts(condition)) {
    const operation = asOperation(conjunct);
    if (!operation || operation.args.length < 2) continue;
    const [a, b] = operation.args;
    if (operation.op === '===') {
      const pathA = plainVarPath(a);
      const pathB = plainVarPath(b);
      if (pathA !== null && isPrimitive(b)) pin(pathA, [b]);
      else if (pathB !== null && isPrimitive(a)) pin(pathB, [a]);
    } else if (operation.op === 'in') {
      const path = plainVarPath(a);
      // `in` is Array.prototype.indexOf on a literal array: strict equality with one of its elements.
      if (path !== null && Array.isArray(b) && b.every(isPrimitive)) pin(path, b);
    }
  }
  return pins;
}

const MAX_ASSIGNMENTS = 4096;

/** Every combination of the pinned values, or null when there are too many to try. */
export function assignments(pins: Map<string, Primitive[]>): Assignment[] | null {
  let result: Map<string, Primitive>[] = [new Map()];
  for (const [path, values] of pins) {
    if (result.length * values.length > MAX_ASSIGNMENTS) return null;
    result = result.flatMap((partial) => values.map((v) => new Map(partial).set(path, v)));
  }
  return result;
}

/**
 * Whether `earlier` surely matches whenever `later` matches (truthy without throwing), for every facts object.
 * Sound, not complete: `false` means "not proved".
 */
export function implies(later: unknown, earlier: unknown, depth = 0): boolean {
  if (depth > 12) return false;
  if (isDeepStrictEqual(later, earlier)) return true; // evaluation is deterministic
  if (isTautology(earlier)) return true;
  const l = asOperation(later);
  if (l && l.args.length > 0) {
    // A truthy `and` evaluated every conjunct to truthy; a truthy `or` evaluated one disjunct to truthy.
    if (l.op === 'and' && l.args.some((c) => implies(c, earlier, depth + 1))) return true;
    if (l.op === 'or' && l.args.every((d) => implies(d, earlier, depth + 1))) return true;
    if (l.op === '!!' && implies(l.args[0], earlier, depth + 1)) return true;
  }
  const e = asOperation(earlier);
  if (e && e.args.length > 0) {
    if (e.op === 'and' && e.args.every((c) => implies(later, c, depth + 1))) return true;
    if (e.op === 'or') {
      // `or` reaches its k-th disjunct only if the ones before it do not throw.
      for (let k = 0; k < e.args.length; k += 1) {
        if (mayThrow(e.args[k])) break;
        if (implies(later, e.args[k], depth + 1)) return true;
      }
    }
    if (e.op === '!!' && !mayThrow(earlier) && implies(later, e.args[0], depth + 1)) return true;
  }
  // Pin the facts `later` restricts to finite sets and try every combination on both conditions.
  const pins = pinnedValues(later);
  const all = pins.size > 0 ? assignments(pins) : null;
  if (all === null || mayThrow(earlier)) return false;
  return all.every((a) => truthOf(later, a) === 'falsy' || truthOf(earlier, a) === 'truthy');
}
