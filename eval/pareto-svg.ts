/** The quality–cost picture of seed 004 §7.7: fact recall against context tokens, one line per system over budgets. */

export interface Series {
  name: string;
  points: { budget: number; tokens: number; recall: number }[];
}

const COLORS = ['#1b6ca8', '#c2410c', '#15803d', '#7c3aed', '#a16207'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function paretoSvg(series: readonly Series[]): string {
  const W = 640;
  const H = 400;
  const m = { left: 60, right: 180, top: 30, bottom: 50 };
  const maxTokens = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.tokens))) * 1.1;
  const x = (t: number) => m.left + (t / maxTokens) * (W - m.left - m.right);
  const y = (r: number) => H - m.bottom - (Number.isFinite(r) ? r : 0) * (H - m.top - m.bottom);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.left}" y="18" font-size="14">Fact recall against context tokens per task (one point per budget)</text>`,
    `<line x1="${m.left}" y1="${H - m.bottom}" x2="${W - m.right}" y2="${H - m.bottom}" stroke="black"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${H - m.bottom}" stroke="black"/>`,
    `<text x="${(m.left + W - m.right) / 2}" y="${H - 12}" text-anchor="middle">context tokens per task (mean)</text>`,
    `<text x="16" y="${(m.top + H - m.bottom) / 2}" transform="rotate(-90 16 ${(m.top + H - m.bottom) / 2})" text-anchor="middle">fact recall</text>`,
  ];
  for (let r = 0; r <= 1.0001; r += 0.25)
    parts.push(
      `<line x1="${m.left - 4}" y1="${y(r)}" x2="${W - m.right}" y2="${y(r)}" stroke="#ddd"/>`,
      `<text x="${m.left - 8}" y="${y(r) + 4}" text-anchor="end">${r.toFixed(2)}</text>`,
    );
  const step = Math.max(1, Math.round(maxTokens / 5 / 50) * 50);
  for (let t = 0; t <= maxTokens; t += step)
    parts.push(`<text x="${x(t)}" y="${H - m.bottom + 16}" text-anchor="middle">${t}</text>`);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const pts = s.points.filter((p) => Number.isFinite(p.recall));
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map((p) => `${x(p.tokens).toFixed(1)},${y(p.recall).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const p of pts)
      parts.push(
        `<circle cx="${x(p.tokens).toFixed(1)}" cy="${y(p.recall).toFixed(1)}" r="4" fill="${color}"><title>${esc(s.name)}, budget ${p.budget}: recall ${p.recall.toFixed(3)} at ${p.tokens.toFixed(0)} tokens</title></circle>`,
      );
    const ly = m.top + 20 + i * 20;
    parts.push(
      `<rect x="${W - m.right + 16}" y="${ly - 9}" width="12" height="12" fill="${color}"/>`,
      `<text x="${W - m.right + 34}" y="${ly + 1}">${esc(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
