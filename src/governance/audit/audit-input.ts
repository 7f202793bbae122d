/** Validation of what callers ask the audit log to append, before anything is queued or sealed. */
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../../shared/canonical-json.js';
import { validationError } from '../../shared/errors.js';
import { TENANT_PATTERN } from '../auth/principal.js';
import type { AuditEntryInput, AuditValue } from './audit-log.port.js';

/** An input with its idempotency key fixed and its details copied, ready to seal. */
export type NormalizedAuditInput = AuditEntryInput & { idempotencyKey: string; details: Record<string, AuditValue> };

/**
 * Checks an input and fixes its key (a random UUID when the caller gave none: `callerKey` is then false, and the
 * key cannot already be written). Errors name the field, prefixed by `prefix` (e.g. `entries.3.`), never a value.
 */
export function normalizeAuditInput(
  input: AuditEntryInput,
  prefix = '',
): { input: NormalizedAuditInput; callerKey: boolean } {
  if (typeof input.tenant !== 'string' || !TENANT_PATTERN.test(input.tenant)) {
    throw validationError(`${prefix}tenant`, 'must match ^[a-z0-9][a-z0-9-]{1,62}$');
  }
  for (const field of ['actor', 'action'] as const) {
    if (typeof input[field] !== 'string' || input[field] === '') {
      throw validationError(`${prefix}${field}`, 'must be a non-empty string');
    }
  }
  if (!['ok', 'refused', 'error'].includes(input.outcome)) {
    throw validationError(`${prefix}outcome`, 'must be ok, refused or error');
  }
  if (input.target !== undefined && input.target !== null && typeof input.target !== 'string') {
    throw validationError(`${prefix}target`, 'must be a string or null');
  }
  const details = input.details ?? {};
  if (typeof details !== 'object' || details === null || Array.isArray(details)) {
    throw validationError(`${prefix}details`, 'must be an object');
  }
  for (const [key, value] of Object.entries(details)) {
    // Both MongoDB and FerretDB read `$…` and dotted names as operators or paths.
    if (key === '' || key.startsWith('$') || key.includes('.') || key.includes('\0')) {
      throw validationError(`${prefix}details`, 'keys must be non-empty, without "$" at the start, "." or NUL');
    }
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
      throw validationError(`${prefix}details.${key}`, 'must be a string, number, boolean or null');
    }
  }
  const callerKey = input.idempotencyKey !== undefined;
  if (callerKey && (typeof input.idempotencyKey !== 'string' || input.idempotencyKey === '')) {
    throw validationError(`${prefix}idempotencyKey`, 'must be a non-empty string');
  }
  const normalized: NormalizedAuditInput = {
    tenant: input.tenant,
    actor: input.actor,
    action: input.action,
    target: input.target ?? null,
    outcome: input.outcome,
    details: { ...details },
    idempotencyKey: input.idempotencyKey ?? randomUUID(),
  };
  try {
    canonicalJson(normalized); // NaN, Infinity, lone surrogates: refused here, not when a batch is sealed
  } catch (error) {
    const field = (error as { field?: string }).field ?? '$';
    throw validationError(
      `${prefix}${field.replace(/^\$\.?/, '')}`,
      'has no canonical JSON form (NaN, Infinity or a lone surrogate)',
    );
  }
  return { input: normalized, callerKey };
}
