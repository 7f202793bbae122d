import fs from 'node:fs';
import path from 'node:path';
import { isAlive } from '../../stack/processes.js';

/**
 * Writes a run's workflow bundle to a file of its own (`<run tag>-<pid>.js`) in `dir`, through a temporary file
 * renamed into place, so that no worker ever reads a half-written bundle and no other run's setup writes over it.
 * Bundles that runs killed before their teardown left (their process is gone) are removed.
 */
export function writeRunBundle(dir: string, code: string, run: string, pid = process.pid): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const name of fs.readdirSync(dir)) {
    const owner = /^[0-9a-f]{4}-(\d+)\.(?:js|tmp)$/.exec(name)?.[1];
    if (owner !== undefined && Number(owner) !== pid && !isAlive(Number(owner))) {
      fs.rmSync(path.join(dir, name), { force: true });
    }
  }
  const file = path.join(dir, `${run}-${pid}.js`);
  const temporary = path.join(dir, `${run}-${pid}.tmp`);
  fs.writeFileSync(temporary, code);
  fs.renameSync(temporary, file);
  return file;
}
