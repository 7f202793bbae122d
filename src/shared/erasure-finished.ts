/**
 * The states an erasure request ends in: nothing runs for it any more, it is not overdue, and filing it again (without
 * a request key) opens a new request. Pure and free of imports, for the workflow sandbox and the console alike.
 */
export const FINISHED_ERASURE_STATES = ['completed', 'rejected'] as const;

export function isErasureFinished(state: string): boolean {
  return (FINISHED_ERASURE_STATES as readonly string[]).includes(state);
}
