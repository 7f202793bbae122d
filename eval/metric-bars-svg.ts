/**
 * The per-metric picture of seed 004 §7.7: for each share-valued metric of Table 1, one bar per system, so a reader
 * sees at a glance where each system wins and loses. Higher is better for every bar: the rates where lower is
 * better (stale, leaking probes) are drawn as their complement and named so. A metric a system did not measure
 * draws no bar, never a zero.
 */
import type { Row } from './table.js';

interface Metric {
  label: string;
  /** The label as drawn under its bars, a line each. */
  lines: string[];
  value: (row: Row) => number;
}

const METRICS: Metric[] = [
  { label: 'fact recall', lines: ['fact recall'], value: (r) => r.recall },
  { label: 'temporal correctness', lines: ['temporal', 'correctness'], value: (r) => r.temporal },
  { label: 'not stale (1 − stale rate)', lines: ['not stale', '(1 − stale rate)'], value: (r) => 1 - r.stale },
  { label: 'no cross-tenant leak', lines: ['no cross-', 'tenant leak'], value: (r) => 1 - r.crossTenant },
  { label: 'no cross-scope leak', lines: ['no cross-', 'scope leak'], value: (r) => 1 - r.crossScope },
  { label: 'deletion completeness', lines: ['deletion', 'completeness'], value: (r) => r.deletion },
];

const COLORS = ['#1b6ca8', '#c2410c', '#15803d', '#7c3aed', '#a16207'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function metricBarsSvg(rows: readonly Row[]): string {
  const W = 960;
  const H = 380;
  const m = { left: 50, right: 290, top: 34, bottom: 70 };
  const plotW = W - m.left - m.right;
  const plotH = H - m.top - m.bottom;
  const group = plotW / METRICS.length;
  const bar = (group * 0.8) / Math.max(1, rows.length);
  const y = (v: number) => m.top + (1 - v) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.left}" y="20" font-size="14">Table 1's shares, one bar per system (higher is better for each)</text>`,
  ];
  for (let v = 0; v <= 1.0001; v += 0.25)
    parts.push(
      `<line x1="${m.left - 4}" y1="${y(v)}" x2="${W - m.right}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${m.left - 8}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}</text>`,
    );
  METRICS.forEach((metric, g) => {
    const x0 = m.left + g * group + group * 0.1;
    rows.forEach((row, i) => {
      const value = metric.value(row);
      if (!Number.isFinite(value)) return;
      const x = x0 + i * bar;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(value).toFixed(1)}" width="${(bar - 2).toFixed(1)}" height="${(plotH * value).toFixed(1)}" fill="${COLORS[i % COLORS.length]!}"><title>${esc(row.system)}: ${esc(metric.label)} ${(value * 100).toFixed(1)} %</title></rect>`,
      );
    });
    const cx = m.left + g * group + group / 2;
    metric.lines.forEach((line, l) =>
      parts.push(
        `<text x="${cx.toFixed(1)}" y="${H - m.bottom + 16 + l * 14}" text-anchor="middle">${esc(line)}</text>`,
      ),
    );
  });
  parts.push(`<line x1="${m.left}" y1="${y(0)}" x2="${W - m.right}" y2="${y(0)}" stroke="black"/>`);
  rows.forEach((row, i) => {
    const ly = m.top + 20 + i * 20;
    parts.push(
      `<rect x="${W - m.right + 16}" y="${ly - 9}" width="12" height="12" fill="${COLORS[i % COLORS.length]!}"/>`,
      `<text x="${W - m.right + 34}" y="${ly + 1}">${esc(row.system)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
