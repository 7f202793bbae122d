import { describe, expect, it } from 'vitest';
import { erasureStats } from '../../../console/src/auditor/erasure-stats.js';

const now = Date.parse('2026-03-18T12:00:00Z'); // a Wednesday
const closed = (received: string, days: number) => ({
  state: 'completed',
  receivedAt: received,
  closedAt: new Date(Date.parse(received) + days * 86_400_000).toISOString(),
  overdue: false,
});

describe("the auditor's erasure figures", () => {
  it('counts completed erasures per ISO week of receipt, and the median and p95 days to close', () => {
    const stats = erasureStats(
      [
        closed('2026-03-16T08:00:00Z', 1), // this week (Monday)
        closed('2026-03-15T23:00:00Z', 2), // Sunday: last week
        closed('2026-03-09T10:00:00Z', 3),
        closed('2026-01-01T10:00:00Z', 30), // before the 8 weeks shown: counted in the times only
        { state: 'partial', receivedAt: '2026-03-17T10:00:00Z', closedAt: null, overdue: true },
        { state: 'rejected', receivedAt: '2026-03-17T10:00:00Z', closedAt: '2026-03-17T11:00:00Z', overdue: false },
      ],
      now,
    );
    expect(stats.perWeek.map((w) => w.week)).toEqual([
      '2026-01-26',
      '2026-02-02',
      '2026-02-09',
      '2026-02-16',
      '2026-02-23',
      '2026-03-02',
      '2026-03-09',
      '2026-03-16',
    ]);
    expect(stats.perWeek.map((w) => w.count)).toEqual([0, 0, 0, 0, 0, 0, 2, 1]);
    expect(stats.medianDaysToClose).toBe(2);
    expect(stats.p95DaysToClose).toBe(30);
    expect(stats.overdue).toBe(1);
    expect(stats.open).toBe(1);
  });

  it('has no times to close when nothing closed', () => {
    expect(erasureStats([], now)).toMatchObject({ medianDaysToClose: null, p95DaysToClose: null, overdue: 0 });
  });
});
