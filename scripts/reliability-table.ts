/** `npm run reliability:table`: renders the fault matrix's last results into the README. */
import fs from 'node:fs';
import path from 'node:path';
import { readCells, readmeWithTable, REPO_DIR } from './fault-matrix.js';

const file = path.join(REPO_DIR, 'README.md');
const before = fs.readFileSync(file, 'utf8');
const after = await readmeWithTable(before, readCells());
fs.writeFileSync(file, after);
console.log(
  after === before ? 'README.md: the fault matrix table is up to date' : 'README.md: fault matrix table rewritten',
);
