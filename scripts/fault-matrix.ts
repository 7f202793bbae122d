/**
 * The fault matrix's last result per cell (`test/reliability/fault-matrix.json`): written by
 * `npm run test:reliability` after each scenario, rendered into docs/reliability.md by `npm run reliability:table`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';

export const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const RESULTS_FILE = path.join(REPO_DIR, 'test', 'reliability', 'fault-matrix.json');
/** The page that shows the table, between its markers. */
export const MATRIX_PAGE = path.join(REPO_DIR, 'docs', 'reliability.md');
const START = '<!-- fault-matrix:start -->';
const END = '<!-- fault-matrix:end -->';

/** One cell: server/fault/step, and what its last run did. Ids and counts only. */
export interface MatrixCell {
  scenario: string;
  fault: string;
  /** The step and its activity, as `purge (purgeRecords)`. */
  step: string;
  outcome: string;
  attempts: number | null;
  faultSeconds: number | null;
  totalSeconds: number | null;
  firstFailure: string;
  /** The day of the run (UTC), and whether CI's reduced form or a full run. */
  date: string;
  mode: 'reduced' | 'full';
}

export function readCells(file = RESULTS_FILE): MatrixCell[] {
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as MatrixCell[]) : [];
}

/** Replaces the cell of the same scenario (or adds it), keeping the matrix's order for the others. */
export function recordCell(cell: MatrixCell, file = RESULTS_FILE): void {
  const cells = readCells(file);
  const at = cells.findIndex((c) => c.scenario === cell.scenario);
  if (at >= 0) cells[at] = cell;
  else cells.push(cell);
  fs.writeFileSync(file, `${JSON.stringify(cells, null, 2)}\n`);
}

const seconds = (n: number | null) => (n === null ? '—' : `${n} s`);

export function renderTable(cells: readonly MatrixCell[]): string {
  return [
    '| fault | step | last run | outcome | attempts | fault lasted | scenario took | first failure |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...cells.map(
      (c) =>
        `| ${c.fault} | ${c.step} | ${c.date} (${c.mode}) | ${c.outcome} | ${c.attempts ?? '—'} | ${seconds(c.faultSeconds)} | ${seconds(c.totalSeconds)} | ${c.firstFailure.replace(/\|/g, '/').slice(0, 70)} |`,
    ),
  ].join('\n');
}

/** The page with the table between its markers rendered from `cells`, formatted as the repository formats it. */
export async function readmeWithTable(readme: string, cells: readonly MatrixCell[]): Promise<string> {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start)
    throw new Error(`${path.relative(REPO_DIR, MATRIX_PAGE)}: the markers ${START} … ${END} are missing`);
  const next = `${readme.slice(0, start + START.length)}\n\n${renderTable(cells)}\n\n${readme.slice(end)}`;
  const options = (await prettier.resolveConfig(MATRIX_PAGE)) ?? {};
  return prettier.format(next, { ...options, parser: 'markdown' });
}
