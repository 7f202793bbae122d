/**
 * The memory lifecycle: the single source of truth for which status changes are legal. Workflows consult
 * it; an illegal transition is an error, never a no-op.
 */
export const MEMORY_STATUSES = [
  'candidate',
  'active',
  'disputed',
  'superseded',
  'expired',
  'rejected',
  'deleted',
  'purged',
] as const;
export type MemoryStatus = (typeof MEMORY_STATUSES)[number];

const TRANSITIONS: Readonly<Record<MemoryStatus, readonly MemoryStatus[]>> = {
  candidate: ['active', 'rejected', 'deleted'],
  active: ['disputed', 'superseded', 'expired', 'deleted'],
  disputed: ['active', 'superseded', 'rejected', 'deleted'],
  superseded: ['deleted'],
  expired: ['deleted'],
  rejected: ['deleted'],
  deleted: ['purged'],
  purged: [],
};

export function canTransition(from: MemoryStatus, to: MemoryStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function nextStatuses(from: MemoryStatus): readonly MemoryStatus[] {
  return TRANSITIONS[from];
}

/**
 * Statuses whose content may be served at all (subject to intent, scope and policy). Expired records wait
 * for their retention erasure and are never served.
 */
export const SERVABLE_STATUSES: readonly MemoryStatus[] = ['active', 'disputed', 'superseded'];

/** Statuses served for questions about the present. */
export const CURRENT_STATUSES: readonly MemoryStatus[] = ['active', 'disputed'];
