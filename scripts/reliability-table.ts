/** `npm run reliability:table`: renders the fault matrix's last results into docs/reliability.md. */
import fs from 'node:fs';
import path from 'node:path';
import { MATRIX_PAGE, readCells, readmeWithTable, REPO_DIR } from './fault-matrix.js';

const name = path.relative(REPO_DIR, MATRIX_PAGE);
const before = fs.readFileSync(MATRIX_PAGE, 'utf8');
const after = await readmeWithTable(before, readCells());
fs.writeFileSync(MATRIX_PAGE, after);
console.log(
  after === before ? `${name}: the fault matrix table is up to date` : `${name}: fault matrix table rewritten`,
);
