import { describe, expect, it } from 'vitest';
import { metricBarsSvg } from '../../../eval/metric-bars-svg.js';
import type { Row } from '../../../eval/table.js';

const row = (system: string, over: Partial<Row> = {}): Row => ({
  system,
  recall: 0.8,
  temporal: 0.5,
  stale: 0.25,
  crossTenant: 0,
  crossScope: 1,
  probes: 72,
  deletion: 1,
  tokens: 190,
  p95: 20,
  bytesPerEvent: 100,
  ...over,
});

const bars = (svg: string) => [...svg.matchAll(/<title>([^<]*)<\/title>/gu)].map((m) => m[1]);

describe('the per-metric bar chart', () => {
  it('draws one bar per system and metric, lower-is-better rates as their complement', () => {
    const svg = metricBarsSvg([row('Lethe'), row('B3 basic RAG', { crossScope: 0.5 })]);
    const titles = bars(svg);
    expect(titles).toHaveLength(12);
    expect(titles).toContain('Lethe: not stale (1 − stale rate) 75.0 %');
    expect(titles).toContain('Lethe: no cross-scope leak 0.0 %');
    expect(titles).toContain('B3 basic RAG: no cross-scope leak 50.0 %');
  });

  it('draws no bar, rather than a zero, for a metric a system did not measure', () => {
    const titles = bars(metricBarsSvg([row('B2', { temporal: Number.NaN })]));
    expect(titles).toHaveLength(5);
    expect(titles.some((t) => t?.includes('temporal correctness'))).toBe(false);
  });

  it('escapes a system name that holds markup', () => {
    expect(metricBarsSvg([row('<script>')])).not.toContain('<script>');
  });
});
