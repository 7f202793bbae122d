import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCells, readmeWithTable, REPO_DIR } from '../../../scripts/fault-matrix.js';

describe('the README’s fault matrix table', () => {
  it('is the last result of every cell, as the reliability suite recorded it (npm run reliability:table)', async () => {
    const readme = fs.readFileSync(path.join(REPO_DIR, 'README.md'), 'utf8');
    const cells = readCells();
    expect(cells.length).toBeGreaterThanOrEqual(24);
    expect(new Set(cells.map((c) => c.scenario)).size).toBe(cells.length);
    expect(await readmeWithTable(readme, cells)).toBe(readme);
  });
});
