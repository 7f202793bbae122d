import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { writeRunBundle } from '../../support/run-bundle.js';

/** A pid no process has: one that just exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe("a test run's workflow bundle", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bundles-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("is a file of the run's own: a second run on the same checkout never writes over the first's", () => {
    const dir = tempDir();
    // Both owners are alive: this process and its parent.
    const first = writeRunBundle(dir, 'first', 'a1b2', process.pid);
    const second = writeRunBundle(dir, 'second', 'c3d4', process.ppid);
    expect(first).not.toBe(second);
    expect(fs.readFileSync(first, 'utf8')).toBe('first');
    expect(fs.readFileSync(second, 'utf8')).toBe('second');
    // Nothing half-written is left for a worker to load.
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('removes what a killed run left, and keeps what a live run is using', () => {
    const dir = tempDir();
    const dead = deadPid();
    fs.writeFileSync(path.join(dir, `ffff-${dead}.js`), 'left by a killed run');
    fs.writeFileSync(path.join(dir, `eeee-${dead}.tmp`), 'half-written by a killed run');
    const live = writeRunBundle(dir, 'live', 'a1b2', process.ppid);
    writeRunBundle(dir, 'mine', 'c3d4', process.pid);
    expect(fs.readdirSync(dir).sort()).toEqual([path.basename(live), `c3d4-${process.pid}.js`].sort());
  });
});
