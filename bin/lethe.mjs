#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx lethe …` works from a checkout without a build step. It runs on the
// Node that npm scripts run on (node_modules/.bin/node, the project's own, where npm ci installed one), however
// this file was started.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const projectNode = path.join(root, 'node_modules', '.bin', 'node');
const result = spawnSync(
  fs.existsSync(projectNode) ? projectNode : process.execPath,
  ['--import', 'tsx', path.join(root, 'app', 'cli', 'main.ts'), ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
