/**
 * RFC 8785 (JCS) canonical JSON: one byte sequence per JSON value, so that a hash or a signature over it
 * is reproducible by anyone, offline. Pure — the workflow sandbox may import it.
 */
import canonicalize from 'canonicalize';
import { validationError } from './errors.js';

/** A value with exactly one canonical form. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * The RFC 8785 form of `value`. Throws a ValidationError naming the path (never the value) for anything
 * JSON cannot carry faithfully: `undefined`, functions, symbols, bigints, NaN/±Infinity, lone surrogates,
 * cycles, and non-plain objects (Map, Set, class instances). Objects with `toJSON` (Date) are serialised
 * through it, as `JSON.stringify` would.
 */
export function canonicalJson(value: unknown): string {
  assertJson(value, '$', new Set());
  const text = canonicalize(value);
  // Unreachable after assertJson (only a top-level undefined yields undefined), kept for the type.
  if (text === undefined) throw validationError('$', 'is not a JSON value');
  return text;
}

function assertJson(value: unknown, path: string, ancestors: Set<object>): void {
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) throw validationError(path, 'contains a lone UTF-16 surrogate');
      return;
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value))
        throw validationError(path, 'must be a finite number (NaN and Infinity have no JSON form)');
      return;
    case 'undefined':
      throw validationError(path, 'is undefined (use null, or leave the field out)');
    case 'bigint':
    case 'symbol':
    case 'function':
      throw validationError(path, `a ${typeof value} has no JSON form`);
    case 'object':
      break;
  }
  if (value === null) return;
  const object = value as object;
  if (ancestors.has(object)) throw validationError(path, 'is a circular reference');
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function') {
    ancestors.add(object);
    assertJson((object as { toJSON(): unknown }).toJSON(), path, ancestors);
    ancestors.delete(object);
    return;
  }
  ancestors.add(object);
  if (Array.isArray(object)) {
    for (let i = 0; i < object.length; i++) assertJson(object[i], `${path}[${i}]`, ancestors);
  } else {
    const proto = Object.getPrototypeOf(object) as unknown;
    if (proto !== Object.prototype && proto !== null) throw validationError(path, 'must be a plain object or an array');
    for (const key of Object.keys(object)) {
      assertJson((object as Record<string, unknown>)[key], `${path}.${key}`, ancestors);
    }
  }
  ancestors.delete(object);
}

function hasLoneSurrogate(text: string): boolean {
  // A well-formed string round-trips through encodeURIComponent; a lone surrogate makes it throw.
  try {
    encodeURIComponent(text);
    return false;
  } catch {
    return true;
  }
}
