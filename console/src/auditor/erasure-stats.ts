/** The auditor's figures over a tenant's erasure requests: erasures per week, time to close, overdue. */
export interface RequestFacts {
  state: string;
  receivedAt: string;
  closedAt: string | null;
  overdue: boolean;
}

export interface WeekCount {
  /** Monday of the ISO week, YYYY-MM-DD (UTC). */
  week: string;
  count: number;
}

export interface ErasureStats {
  perWeek: WeekCount[];
  /** Days from receipt to close of completed requests; null when none closed. */
  medianDaysToClose: number | null;
  p95DaysToClose: number | null;
  overdue: number;
  open: number;
}

const DAY = 86_400_000;

function mondayOf(t: number): number {
  const d = new Date(t);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return midnight - ((d.getUTCDay() + 6) % 7) * DAY;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Completed requests counted in the week they were received, over the `weeks` weeks up to `now`. */
export function erasureStats(requests: readonly RequestFacts[], now: number, weeks = 8): ErasureStats {
  const thisWeek = mondayOf(now);
  const perWeek: WeekCount[] = Array.from({ length: weeks }, (_, i) => ({
    week: new Date(thisWeek - (weeks - 1 - i) * 7 * DAY).toISOString().slice(0, 10),
    count: 0,
  }));
  const closeDays: number[] = [];
  let overdue = 0;
  let open = 0;
  for (const r of requests) {
    const received = Date.parse(r.receivedAt);
    if (r.overdue) overdue++;
    if (r.state !== 'completed' && r.state !== 'rejected') open++;
    if (r.state !== 'completed') continue;
    const index = weeks - 1 - Math.round((thisWeek - mondayOf(received)) / (7 * DAY));
    if (index >= 0 && index < weeks) perWeek[index]!.count++;
    if (r.closedAt) closeDays.push((Date.parse(r.closedAt) - received) / DAY);
  }
  closeDays.sort((a, b) => a - b);
  return {
    perWeek,
    medianDaysToClose: percentile(closeDays, 50),
    p95DaysToClose: percentile(closeDays, 95),
    overdue,
    open,
  };
}
