/**
 * ISO 8601 durations, the way the retention and review-SLA policies state their outcomes (`P30D`, `P1Y`,
 * `PT4H`). Pure, so workflows may use it (through `evaluate.ts`) to turn a policy outcome into a timer.
 */

/** The parts of an ISO 8601 duration; each is a whole number. */
export interface IsoDuration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

// P, then at least one part; a T must be followed by at least one time part.
const DURATION = /^P(?!$)(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Parses `PnYnMnWnDTnHnMnS` (whole numbers only); `null` when the text is not such a duration. */
export function parseIsoDuration(text: string): IsoDuration | null {
  const match = DURATION.exec(text);
  if (!match) return null;
  const part = (i: number): number => Number(match[i] ?? 0);
  return {
    years: part(1),
    months: part(2),
    weeks: part(3),
    days: part(4),
    hours: part(5),
    minutes: part(6),
    seconds: part(7),
  };
}

export function isIsoDuration(text: string): boolean {
  return DURATION.test(text);
}

function parsed(duration: IsoDuration | string): IsoDuration {
  if (typeof duration !== 'string') return duration;
  const result = parseIsoDuration(duration);
  if (!result) throw new RangeError(`not an ISO 8601 duration: ${JSON.stringify(duration)}`);
  return result;
}

/**
 * Adds a duration in UTC: years and months by the calendar (clamped to the last day of a shorter month, so
 * 31 Jan + P1M is 28/29 Feb), weeks, days and time parts as fixed lengths.
 */
export function addIsoDuration(start: Date, duration: IsoDuration | string): Date {
  const d = parsed(duration);
  const totalMonths = start.getUTCMonth() + d.months + 12 * d.years;
  const year = start.getUTCFullYear() + Math.floor(totalMonths / 12);
  const month = totalMonths % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const shifted = new Date(start.getTime());
  shifted.setUTCFullYear(year, month, Math.min(start.getUTCDate(), lastDay));
  return new Date(shifted.getTime() + fixedMs(d));
}

function fixedMs(d: IsoDuration): number {
  return (7 * d.weeks + d.days) * DAY + d.hours * HOUR + d.minutes * MINUTE + d.seconds * SECOND;
}

/**
 * The duration in milliseconds, for timers. Years and months are refused: their length depends on the date
 * they start from (use `addIsoDuration`).
 */
export function isoDurationToMs(duration: IsoDuration | string): number {
  const d = parsed(duration);
  if (d.years !== 0 || d.months !== 0) {
    throw new RangeError('a duration with years or months has no fixed length; add it to a date instead');
  }
  return fixedMs(d);
}

/** An approximate length in milliseconds (a year of 365 days, a month of 30) for ordering durations. */
export function approximateMs(duration: IsoDuration | string): number {
  const d = parsed(duration);
  return (365 * d.years + 30 * d.months) * DAY + fixedMs(d);
}
