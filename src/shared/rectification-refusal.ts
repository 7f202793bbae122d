/** Who may not decide a rectification: pure, and free of imports, for the workflow sandbox. */

/** Why a decision is refused before anything is written, or null. */
export function decisionRefusal(request: { writers: readonly string[]; requester: string }, reviewer: string) {
  if (request.writers.includes(reviewer)) return 'reviewer: may not decide on the correction of a record they wrote';
  if (request.requester === reviewer) return 'reviewer: may not decide on a correction they filed';
  return null;
}
