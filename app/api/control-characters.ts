/**
 * Strings with control characters are refused before any route sees them: MongoDB refuses a NUL inside a key
 * or a query value, and no identifier, selector or purpose has a use for the others. Text may keep tabs and
 * line breaks.
 */
import type { FastifyInstance } from 'fastify';
import { DomainError, ErrorType } from '../../src/shared/errors.js';

// C0 controls other than tab, line feed and carriage return, and DEL: matching them is the point.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** The path of the first string (key or value) holding a control character, or null. Iterative: no depth limit. */
export function firstControlCharacter(value: unknown, root: string): string | null {
  const pending: [unknown, string][] = [[value, root]];
  while (pending.length > 0) {
    const [current, path] = pending.pop()!;
    if (typeof current === 'string') {
      if (CONTROL.test(current)) return path;
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push([current[i], `${path}.${i}`]);
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current as Record<string, unknown>);
      for (const [key] of entries) if (CONTROL.test(key)) return `${path}.${key.replace(CONTROL, '?')}`;
      for (let i = entries.length - 1; i >= 0; i--) pending.push([entries[i]![1], `${path}.${entries[i]![0]}`]);
    }
  }
  return null;
}

function refuse(part: 'params' | 'query' | 'body', value: unknown): void {
  const path = firstControlCharacter(value, part);
  if (!path) return;
  // The path names the field; the field's value is never echoed back.
  const field = path.replace(/^(params|query|body)\.?/, '') || part;
  throw new DomainError(ErrorType.Validation, `${field}: control characters are not allowed`, field);
}

/**
 * Path and query are checked first, before authentication writes its audit entry under the path's tenant;
 * the body once it is parsed. Registered before the authentication hook.
 */
export function refuseControlCharacters(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    refuse('params', withWildcardDecoded(request.params));
    refuse('query', request.query);
  });
  app.addHook('preValidation', async (request) => {
    refuse('body', request.body);
  });
}

/** A wildcard parameter (`*`) arrives still percent-encoded: decoded here, a `%00` in it is the NUL it stands for. */
function withWildcardDecoded(params: unknown): unknown {
  const wildcard = (params as { '*'?: unknown } | undefined)?.['*'];
  if (typeof wildcard !== 'string') return params;
  let decoded: string;
  try {
    decoded = decodeURIComponent(wildcard);
  } catch {
    throw new DomainError(ErrorType.Validation, '*: not a percent-encoded path', '*');
  }
  return { ...(params as object), '*': decoded };
}
