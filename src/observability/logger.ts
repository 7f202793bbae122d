import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured logs carry ids, keyed hashes and counts. Fields that could hold personal data are
 * censored even if a caller passes them by mistake.
 */
export const REDACTED_FIELDS = [
  'content',
  'text',
  'query',
  'subject',
  'subjects',
  'subjectId',
  'email',
  'to',
  'body',
  'authorization',
  'token',
  'req.headers.authorization',
  '*.content',
  '*.text',
  '*.query',
  '*.subjects',
  '*.subjectId',
  '*.email',
];

export function createLogger(level: string, name = 'lethe'): Logger {
  return pino({ name, level, redact: { paths: REDACTED_FIELDS, censor: '[redacted]' } });
}
