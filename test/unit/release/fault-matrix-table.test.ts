import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MATRIX_PAGE, readCells, readmeWithTable } from '../../../scripts/fault-matrix.js';

describe('the fault matrix table in docs/reliability.md', () => {
  it('is the last result of every cell, as the reliability suite recorded it (npm run reliability:table)', async () => {
    const readme = fs.readFileSync(MATRIX_PAGE, 'utf8');
    const cells = readCells();
    expect(cells.length).toBeGreaterThanOrEqual(24);
    expect(new Set(cells.map((c) => c.scenario)).size).toBe(cells.length);
    expect(await readmeWithTable(readme, cells)).toBe(readme);
  });
});
