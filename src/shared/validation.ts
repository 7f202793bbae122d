import type { z } from 'zod';
import { validationError } from './errors.js';

/** Parses with a zod schema; the first problem becomes a ValidationError naming the field path. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || 'body';
  const message = issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}` : issue.message;
  const name =
    issue.code === 'unrecognized_keys' && issue.keys[0]
      ? [field === 'body' ? '' : field, issue.keys[0]].filter(Boolean).join('.')
      : field;
  return (() => {
    throw validationError(name, message);
  })();
}
