/**
 * No one decides on their own work: a reviewer may not decide on a write they made, adjudicate a dispute over one, or
 * decide the correction of a record they wrote or a correction they filed. Pure and free of imports: the routes refuse
 * early with it, and the workflows, where the decision is taken, refuse with it again.
 */
export type DecidedItem =
  | { kind: 'review'; writtenBy: string }
  | { kind: 'dispute'; writers: readonly string[] }
  | { kind: 'rectification'; writers: readonly string[]; requester: string };

/** Why this reviewer may not decide on this item, or null. */
export function selfReviewRefusal(item: DecidedItem, reviewer: string): string | null {
  switch (item.kind) {
    case 'review':
      return item.writtenBy === reviewer ? 'reviewer: may not decide on a write they made' : null;
    case 'dispute':
      return item.writers.includes(reviewer) ? 'reviewer: may not adjudicate a dispute over a write they made' : null;
    case 'rectification':
      if (item.writers.includes(reviewer)) return 'reviewer: may not decide on the correction of a record they wrote';
      if (item.requester === reviewer) return 'reviewer: may not decide on a correction they filed';
      return null;
  }
}
