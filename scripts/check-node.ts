/**
 * `npm run check:node`: prints the Node.js that npm scripts run on (the one `npm test` and `npm run demo` run on)
 * and fails unless its major is the image's and every place naming the major agrees with `.nvmrc`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { imageNodeMajor, nodeMajorProblems } from './release/node-major.js';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const found = nodeMajorProblems(repoDir);

console.log(`node ${process.version} (${process.execPath}); the image's major: ${imageNodeMajor(repoDir)}`);
for (const line of found) console.error(`node major: ${line}`);
if (found.length > 0) process.exit(1);
