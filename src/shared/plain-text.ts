import { z } from 'zod';

/** Control characters (C0, DEL, C1) and lone surrogates: what a stored field or a log line would mangle. */
export const ODD_CHARACTERS =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** NUL and lone surrogates: what free text (which may hold line breaks and tabs) must still not carry. */
// eslint-disable-next-line no-control-regex
export const UNSTORABLE_CHARACTERS = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A one-line identifier or key of 1 to `max` characters, with no control characters or unpaired surrogates. */
export const plainString = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !ODD_CHARACTERS.test(s), 'must not contain control characters or unpaired surrogates');
