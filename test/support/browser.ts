/**
 * A headless Chromium for the console tests, from the npm package @sparticuz/chromium (no browser download):
 * unpacked once into the stack's state directory (not the shared /tmp, whose copy may be of another version),
 * launched without the package's own flags, which switch web security off and would hide CSP and CORS bugs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sparticuz from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';
import { loadStackConfig } from '../../stack/stack-config.js';

const CONSOLE_INDEX = path.join(loadStackConfig().repoDir, 'dist', 'console', 'index.html');

/** The unpacked browser; concurrent test files wait for the one that unpacks it. */
async function executable(): Promise<string> {
  const dir = path.join(loadStackConfig().stateDir, 'chromium', '153.0.0');
  const ready = path.join(dir, '.ready');
  const lock = `${dir}.lock`;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const unpack = async () => {
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    try {
      return await sparticuz.executablePath();
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
  };
  for (let waited = 0; waited < 120_000; waited += 250) {
    if (fs.existsSync(ready)) return unpack();
    try {
      fs.mkdirSync(lock);
    } catch {
      await sleep(250);
      continue;
    }
    try {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      const file = await unpack();
      fs.writeFileSync(ready, '');
      return file;
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
  throw new Error(`chromium: still being unpacked into ${dir} after 120 s (remove ${lock} if no test runs)`);
}

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CONSOLE_INDEX)) throw new Error('the consoles are not built: run `npm run build:console`');
  return chromium.launch({ executablePath: await executable(), args: [], headless: true });
}
