/** Period bounds as people type them (`2025-01-31`) and as machines send them (`2025-01-31T12:00:00Z`). */
import { validationError } from '../../shared/errors.js';
import type { CertificatePeriod } from './certificate-store.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Parses one bound. A date alone means the whole UTC day: its first instant as `from`, its last millisecond as
 * `to`, so `--from 2025-01-01 --to 2025-01-31` covers all of January. A date-time needs a zone (Z or ±hh:mm).
 */
export function parsePeriodBound(value: string, bound: 'from' | 'to', field: string = bound): Date {
  const dateOnly = DATE.test(value);
  if (!dateOnly && !DATE_TIME.test(value)) {
    throw validationError(
      field,
      'must be an ISO 8601 date (2025-01-31) or date-time with a zone (2025-01-31T12:00:00Z)',
    );
  }
  const at = new Date(dateOnly ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(at.getTime()) || (dateOnly && at.toISOString().slice(0, 10) !== value)) {
    throw validationError(field, 'is not a real date');
  }
  return dateOnly && bound === 'to' ? new Date(at.getTime() + DAY_MS - 1) : at;
}

/** Parses optional `from`/`to` strings into a period; `from` must not be after `to`. */
export function parsePeriod(
  from: string | undefined,
  to: string | undefined,
  fields = { from: 'from', to: 'to' },
): CertificatePeriod {
  const period: CertificatePeriod = {
    ...(from !== undefined ? { from: parsePeriodBound(from, 'from', fields.from) } : {}),
    ...(to !== undefined ? { to: parsePeriodBound(to, 'to', fields.to) } : {}),
  };
  if (period.from && period.to && period.from > period.to)
    throw validationError(fields.to, `must not be before ${fields.from}`);
  return period;
}
