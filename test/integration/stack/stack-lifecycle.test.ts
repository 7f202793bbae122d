import fs from 'node:fs';
import { freePort, portOpen, waitFor } from '../../../stack/processes.js';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import { Connection } from '@temporalio/client';
import { checkReadiness } from '../../../src/observability/readiness.js';
import { buildApiServer } from '../../../app/api/server.js';
import { createLogger } from '../../../src/observability/logger.js';
import { smtpProbe, temporalProbe } from '../../../src/observability/dependency-probes.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A second, small stack (Temporal + SMTP) in a state directory and on ports of its own, so that the
 * suite's main stack is never disturbed.
 */
describe('npm run stack:up | stack:down | stack:status', async () => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-stack-'));
  const env = {
    ...process.env,
    LETHE_STATE_DIR: stateDir,
    LETHE_STACK_SERVICES: 'temporal,smtp',
    TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
    SMTP_PORT: String(await freePort()),
  };
  const stack = (command: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'stack/cli.ts', command], { cwd: repo, env, encoding: 'utf8' });
  const pids = () =>
    Object.fromEntries(
      fs
        .readdirSync(path.join(stateDir, 'pids'))
        .map((f) => [
          f.replace('.pid', ''),
          Number(fs.readFileSync(path.join(stateDir, 'pids', f), 'utf8').split('\n')[0]),
        ]),
    );

  afterAll(() => {
    stack('down');
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it('starts each server once, however often it is called', () => {
    expect(stack('up').status).toBe(0);
    const first = pids();
    const second = stack('up');
    expect(second.status).toBe(0);
    expect(second.stderr).toMatch(/temporal .* already up/);
    expect(pids()).toEqual(first);
    expect(Object.keys(first).sort()).toEqual(['smtp', 'temporal']);
    expect(Object.values(first).every(alive)).toBe(true);
  }, 180_000);

  it("names the server that died, in stack:status and in the operators' readiness", async () => {
    const smtpPid = pids().smtp!;
    process.kill(smtpPid, 'SIGKILL');
    // Until it is gone: the process reaped and its port closed (bounded below the test's timeout).
    const gone = await waitFor(
      async () => !alive(smtpPid) && !(await portOpen('127.0.0.1', Number(env.SMTP_PORT))),
      45_000,
      50,
    );
    expect(gone, `smtp (pid ${smtpPid}) still alive or listening after SIGKILL`).toBe(true);
    const status = stack('status');
    expect(status.status).toBe(1);
    expect(status.stdout).toMatch(/smtp\s+down/);
    expect(status.stdout).toMatch(/temporal\s+up/);

    const connection = Connection.lazy({ address: env.TEMPORAL_ADDRESS });
    const mail = nodemailer.createTransport({ host: '127.0.0.1', port: Number(env.SMTP_PORT), ignoreTLS: true });
    const probes = [temporalProbe(connection), smtpProbe(mail)];
    const api = await buildApiServer({ log: createLogger('silent'), probes });
    // The balancer's probe: the API serves without mail (the worker sends it), and names nothing.
    const response = await api.inject({ method: 'GET', url: '/readyz' });
    await api.close();
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ready: true });
    // What the operators' readiness serves (GET /v1/tenants/:tenant/readiness, admin role).
    const report = await checkReadiness(probes);
    await connection.close();
    expect(report.ready).toBe(false);
    expect(report.dependencies.temporal?.ok).toBe(true);
    expect(report.dependencies.smtp?.ok).toBe(false);
  }, 60_000);

  it('stops only the servers it started', () => {
    const before = pids();
    const down = stack('down');
    expect(down.status).toBe(0);
    expect(alive(before.temporal!)).toBe(false);
    // The suite's own stack is untouched.
    const main = spawnSync(process.execPath, ['--import', 'tsx', 'stack/cli.ts', 'status'], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(main.status).toBe(0);
  }, 60_000);
});
