/**
 * The API as its operators run it (`app/api/server.main.ts` in a process of its own): on SIGTERM it stops accepting
 * connections, answers the request in flight as usual and exits 0; a second signal, or work in flight past the
 * grace, makes it exit 1.
 */
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_DIR } from '../../support/cli-process.js';
import { freePort } from '../../../stack/processes.js';
import { testConfig } from '../../support/harness.js';
import { uniqueTenant } from '../../support/app.js';
import { mintToken } from '../../../src/governance/auth/tokens.js';

interface ApiProcess {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];

async function startApi(env: Record<string, string> = {}): Promise<ApiProcess> {
  const config = testConfig();
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_DIR, 'app', 'api', 'server.main.ts')], {
    cwd: REPO_DIR,
    env: {
      ...process.env,
      LETHE_ENV: 'test',
      // Info: the API logs each request as it arrives, which tells the test its request is in flight.
      LOG_LEVEL: 'info',
      LETHE_API_PORT: String(port),
      LETHE_TOKEN_SECRET: config.tokens.hs256Secret!,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the API did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { child, port, output: () => output, exited };
}

/** A retrieval whose body the test sends in two halves, so that it stays in flight for as long as the test wants. */
async function slowRetrieval(api: ApiProcess) {
  const tenant = uniqueTenant();
  const token = await mintToken(testConfig().tokens.hs256Secret!, { id: 'agent-1', tenant, roles: ['agent'] }, 600);
  const body = JSON.stringify({ query: 'how does the customer want to be contacted?' });
  const request = http.request({
    host: '127.0.0.1',
    port: api.port,
    method: 'POST',
    path: `/v1/tenants/${tenant}/retrieve`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
  });
  // Never rejects: a connection cut by the API is an outcome the tests check, not an unhandled error.
  const answered = new Promise<{ status: number; body: string } | { cut: string }>((resolve) => {
    request.once('error', (error: NodeJS.ErrnoException) => resolve({ cut: error.code ?? error.message }));
    request.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
  });
  request.write(body.slice(0, 10));
  // The API logs the request once its headers are in: from then on it is in flight.
  await until('the API to receive the request', () => api.output().includes(`/v1/tenants/${tenant}/retrieve`));
  return { finish: () => request.end(body.slice(10)), answered };
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the API stopping on SIGTERM', () => {
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('answers the request in flight with its usual status, refuses new connections, and exits 0', async () => {
    const api = await startApi();
    const slow = await slowRetrieval(api);
    api.child.kill('SIGTERM');
    await until('the API to stop accepting connections', async () => !(await connects(api.port)));
    slow.finish();
    const answer = await slow.answered;
    if ('cut' in answer) throw new Error(`the request in flight was cut (${answer.cut}):\n${api.output()}`);
    expect(answer.status, answer.body).toBe(200);
    expect(JSON.parse(answer.body)).toHaveProperty('items');
    expect(await api.exited, api.output()).toBe(0);
  }, 90_000);

  it('exits 1 at once on a second signal while a request is still in flight', async () => {
    const api = await startApi();
    const slow = await slowRetrieval(api);
    api.child.kill('SIGTERM');
    await until('the API to stop accepting connections', async () => !(await connects(api.port)));
    api.child.kill('SIGTERM');
    expect(await api.exited, api.output()).toBe(1);
    expect(await slow.answered).toEqual({ cut: 'ECONNRESET' });
  }, 90_000);

  it('exits 1 when the request in flight outlives the grace', async () => {
    const api = await startApi({ LETHE_SHUTDOWN_GRACE_MS: '1000' });
    const slow = await slowRetrieval(api);
    api.child.kill('SIGTERM');
    expect(await api.exited, api.output()).toBe(1);
    expect(api.output()).toContain('work in flight did not finish before the deadline');
    expect(await slow.answered).toEqual({ cut: 'ECONNRESET' });
  }, 90_000);
});
