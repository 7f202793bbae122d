/**
 * The CLI as its users run it: `node bin/lethe.mjs …` in a process of its own, against a test app whose API
 * listens on a real port. The CLI gets the test app's secrets, so that the tokens it mints are the ones the API
 * accepts and `certificates public-key` prints the key the worker signs with.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestApp } from './app.js';
import { freePort } from '../../stack/processes.js';

export const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const LETHE_BIN = path.join(REPO_DIR, 'bin', 'lethe.mjs');

export interface ProcessRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Starts the test app's API on a free local port; the answer is its base URL. */
export function listenOnRealPort(app: TestApp): Promise<string> {
  return app.api.listen({ host: '127.0.0.1', port: 0 });
}

/**
 * The environment a CLI process needs to reach the test app: the API's URL and the app's secrets. A token or API
 * URL from the developer's own shell is left out.
 */
export function cliEnvironment(app: TestApp, apiUrl: string): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'LETHE_TOKEN' && name !== 'LETHE_API_URL'),
  );
  const { secrets } = app.runtime.config;
  return {
    ...inherited,
    LETHE_API_URL: apiUrl,
    LETHE_TOKEN_SECRET: app.runtime.config.tokens.hs256Secret,
    LETHE_FINGERPRINT_KEYS: secrets.fingerprintKeys.map((k) => `${k.id}:${k.secret}`).join(','),
    LETHE_SIGNING_KEY_FILE: secrets.signingKeyFile,
  };
}

/** Runs a program to its end; never rejects on a non-zero exit (the caller checks the code). */
export function runProcess(
  file: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number },
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env, cwd: options.cwd ?? REPO_DIR, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** `node bin/lethe.mjs <args>`. */
export function runLethe(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number },
): Promise<ProcessRun> {
  return runProcess(process.execPath, [LETHE_BIN, ...args], options);
}

/** A local port nothing listens on. */
export const closedPort = freePort;
