import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, registerConsole } from '../../../app/api/console-static.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-console-static-'));
const dir = path.join(root, 'console');
fs.mkdirSync(dir);
fs.mkdirSync(path.join(dir, 'assets'));
fs.writeFileSync(
  path.join(dir, 'index.html'),
  '<!doctype html><script type="module" src="/console/assets/a.js"></script>',
);
fs.writeFileSync(path.join(dir, 'assets', 'a.js'), 'export {};');
fs.writeFileSync(path.join(dir, 'assets', 'notes.txt'), 'not a servable type');
fs.writeFileSync(path.join(root, 'outside.js'), 'secret');

async function serve(from: string) {
  const app = Fastify();
  registerConsole(app, from);
  await app.ready();
  return app;
}

describe('serving the consoles', () => {
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('serves the page and its assets with a strict CSP; the page is never cached, hashed assets are', async () => {
    const app = await serve(dir);
    const page = await app.inject({ url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).not.toMatch(/unsafe|\*/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const script = await app.inject({ url: '/console/assets/a.js' });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toContain('immutable');
    expect((await app.inject({ url: '/console' })).headers.location).toBe('/console/');
  });

  it('answers 404 for anything not in the build, including paths that climb out of it', async () => {
    const app = await serve(dir);
    for (const url of [
      '/console/missing.js',
      '/console/assets/notes.txt',
      '/console/../outside.js',
      '/console/%2e%2e/outside.js',
    ]) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).not.toContain('secret');
    }
  });

  it('says how to build the consoles when they are not built', async () => {
    const app = await serve(path.join(dir, 'none'));
    const response = await app.inject({ url: '/console/' });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('npm run build:console');
  });
});
