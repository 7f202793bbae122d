/**
 * The last checkpoint this browser verified for a tenant's log, and the log key it was verified under, kept in
 * localStorage: the next visit asks the log to prove that its current tree extends it. The key is pinned here on the
 * first visit; a log that later signs with another key fails, as would a log that rewrote its past.
 */

export interface LastSeenCheckpoint {
  /** The log's verifier key, pinned on the first visit. */
  verifierKey: string;
  /** The signed note as verified. */
  note: string;
  size: number;
  /** When this browser verified it (ISO). */
  seenAt: string;
}

const storageKey = (tenant: string) => `lethe.audit-log.last-seen.${tenant}`;

/** The kept checkpoint; `unreadable` when something is stored that is not one (never silently replaced). */
export function readLastSeen(tenant: string): LastSeenCheckpoint | 'unreadable' | null {
  const raw = localStorage.getItem(storageKey(tenant));
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw) as Partial<LastSeenCheckpoint>;
    if (
      typeof v.verifierKey === 'string' &&
      typeof v.note === 'string' &&
      typeof v.size === 'number' &&
      typeof v.seenAt === 'string'
    )
      return { verifierKey: v.verifierKey, note: v.note, size: v.size, seenAt: v.seenAt };
  } catch {
    // falls through
  }
  return 'unreadable';
}

export function keepLastSeen(tenant: string, seen: LastSeenCheckpoint): void {
  localStorage.setItem(storageKey(tenant), JSON.stringify(seen));
}

export function forgetLastSeen(tenant: string): void {
  localStorage.removeItem(storageKey(tenant));
}
