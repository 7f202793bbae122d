import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, isAlive, waitFor } from '../../../stack/processes.js';
import { postgresPlacement } from '../../../stack/stack-config.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * A checkout inside a private directory (mode 0700, as `mktemp -d` makes it): PostgreSQL runs as `postgres`,
 * which cannot enter it. A PostgreSQL of its own, in a state directory and on a port of its own, so that the
 * suite's main stack is never disturbed.
 */
describe.skipIf(process.getuid?.() !== 0)('the PostgreSQL of a checkout in a private directory', async () => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-pg-'));
  const env = {
    ...process.env,
    LETHE_STATE_DIR: stateDir,
    LETHE_STACK_SERVICES: 'postgres',
    LETHE_PG_PORT: String(await freePort()),
  };
  const stack = (command: string, overrides: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'stack/cli.ts', command], {
      cwd: repo,
      env: { ...env, ...overrides },
      encoding: 'utf8',
    });
  const { dataDir, home, link } = postgresPlacement(stateDir);

  afterAll(() => {
    stack('down');
    fs.rmSync(stateDir, { recursive: true, force: true });
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('keeps the cluster outside the checkout, where postgres reaches it, says where, and stops it by its pid', async () => {
    expect(fs.statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(home).toMatch(/^\/var\/tmp\/lethe-postgres-[0-9a-f]{12}$/);

    const up = stack('up');
    expect(up.status, up.stderr).toBe(0);
    expect(up.stderr).toContain(`data in ${dataDir}`);
    const status = stack('status');
    expect(status.status, status.stdout).toBe(0);
    expect(status.stdout).toMatch(/postgres\s+up \(pid \d+\)/);
    expect(status.stdout).toContain(`data in ${dataDir}`);

    const postgresUid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    expect(fs.statSync(dataDir).uid).toBe(postgresUid);
    expect(fs.readlinkSync(link)).toBe(dataDir);
    expect(fs.readFileSync(path.join(home!, 'state-dir'), 'utf8').trim()).toBe(stateDir);
    // Everything else stays in the state directory, the server's log included.
    expect(fs.readFileSync(path.join(stateDir, 'logs', 'postgres.log'), 'utf8')).toContain(
      'ready to accept connections',
    );

    const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const down = stack('down');
    expect(down.status, down.stderr).toBe(0);
    expect(down.stderr).toMatch(/postgres\s+stopped/);
    expect(await waitFor(async () => !isAlive(pid), 20_000, 100), `postmaster ${pid} still alive`).toBe(true);
    expect(stack('status').stdout).toMatch(/postgres\s+down/);
  }, 60_000);

  it('gives a second state directory a cluster of its own', () => {
    const second = path.join(stateDir, 'second');
    const other = postgresPlacement(second);
    expect(other.dataDir).not.toBe(dataDir);
    expect(stack('status', { LETHE_STATE_DIR: second }).stdout).toContain(`data in ${other.dataDir}`);
  });
});
