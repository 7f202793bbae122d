import type { PageKey } from '../../../src/substrate/mongo/keyset-page.js';
import { validationError } from '../../../src/shared/errors.js';

/** `limit` and `cursor` of every list route (JSON schema properties of its query string). */
export const pageQueryProperties = {
  limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: 1024,
    pattern: '^[A-Za-z0-9_-]+$',
    description: "the previous page's nextCursor",
  },
} as const;

/** Where a page ended, with the part of a list it was in (a list made of several, like the review queue). */
export interface Position {
  part?: string;
  key: PageKey | null;
}

/**
 * Cursors are opaque to callers (base64url of the position), so that their shape may change; one that does not
 * decode to a position is refused naming `cursor`, without echoing it.
 */
export function encodeCursor(position: Position): string {
  const raw = { p: position.part, a: position.key?.at.toISOString(), i: position.key?.id };
  return Buffer.from(JSON.stringify(raw)).toString('base64url');
}

export function decodeCursor(cursor: string | undefined, parts: readonly string[] = []): Position | null {
  if (cursor === undefined) return null;
  const refused = validationError('cursor', 'is not a cursor this list issued');
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refused;
  }
  if (typeof raw !== 'object' || raw === null) throw refused;
  const { p, a, i } = raw as { p?: unknown; a?: unknown; i?: unknown };
  if (p !== undefined && (typeof p !== 'string' || !parts.includes(p))) throw refused;
  if (parts.length > 0 && p === undefined) throw refused;
  if (a === undefined && i === undefined) return { ...(p !== undefined ? { part: p } : {}), key: null };
  const at = typeof a === 'string' ? new Date(a) : null;
  if (!at || Number.isNaN(at.getTime()) || typeof i !== 'string' || i.length === 0 || i.length > 256) throw refused;
  return { ...(p !== undefined ? { part: p } : {}), key: { at, id: i } };
}

/** The cursor of the page after this one, or null. */
export function nextCursor(key: PageKey | null, part?: string): string | null {
  return key ? encodeCursor({ ...(part !== undefined ? { part } : {}), key }) : null;
}
