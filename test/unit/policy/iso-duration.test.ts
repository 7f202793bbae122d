import { describe, expect, it } from 'vitest';
import {
  addIsoDuration,
  approximateMs,
  isIsoDuration,
  isoDurationToMs,
  parseIsoDuration,
} from '../../../src/governance/policy/iso-duration.js';

describe('ISO 8601 durations', () => {
  it('parses the parts policies use', () => {
    expect(parseIsoDuration('P1Y2M3W4DT5H6M7S')).toEqual({
      years: 1,
      months: 2,
      weeks: 3,
      days: 4,
      hours: 5,
      minutes: 6,
      seconds: 7,
    });
    expect(parseIsoDuration('PT4H')).toMatchObject({ hours: 4, days: 0 });
  });

  it.each(['', 'P', 'PT', 'P1YT', '30D', 'P1.5D', 'P-1D', 'p1d', 'P1H'])('refuses %j', (text) => {
    expect(parseIsoDuration(text)).toBeNull();
    expect(isIsoDuration(text)).toBe(false);
  });

  it('adds years and months by the calendar, clamping to the end of a shorter month', () => {
    expect(addIsoDuration(new Date('2024-01-31T10:00:00Z'), 'P1M').toISOString()).toBe('2024-02-29T10:00:00.000Z');
    expect(addIsoDuration(new Date('2024-02-29T00:00:00Z'), 'P1Y').toISOString()).toBe('2025-02-28T00:00:00.000Z');
    expect(addIsoDuration(new Date('2024-11-15T00:00:00Z'), 'P3M').toISOString()).toBe('2025-02-15T00:00:00.000Z');
    expect(addIsoDuration(new Date('2024-03-01T00:00:00Z'), 'P10Y').toISOString()).toBe('2034-03-01T00:00:00.000Z');
    expect(addIsoDuration(new Date('2024-03-01T00:00:00Z'), 'P30DT12H').toISOString()).toBe('2024-03-31T12:00:00.000Z');
  });

  it('converts fixed-length durations to milliseconds for timers, and refuses years and months', () => {
    expect(isoDurationToMs('PT4H')).toBe(4 * 3600_000);
    expect(isoDurationToMs('P1W2D')).toBe(9 * 86_400_000);
    expect(() => isoDurationToMs('P1M')).toThrow(/no fixed length/);
    expect(() => isoDurationToMs('4 hours')).toThrow(/not an ISO 8601 duration/);
  });

  it('orders durations by approximate length', () => {
    const sorted = ['P1Y', 'PT4H', 'P6Y', 'P30D', 'P90D', 'P1D'].sort((a, b) => approximateMs(a) - approximateMs(b));
    expect(sorted).toEqual(['PT4H', 'P1D', 'P30D', 'P90D', 'P1Y', 'P6Y']);
  });
});
