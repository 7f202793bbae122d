import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build:console` (run by `npm ci` through `prepare`) writes the consoles' static files. */
export const DEFAULT_CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/console');

/**
 * Strict: scripts, styles and requests only from this origin, nothing inline, no framing, no form posts elsewhere.
 * The consoles reach the product through the same API as any client.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

interface StaticFile {
  type: string;
  body: Buffer;
}

/** Every file of the build, read once: the set of servable paths is fixed, so no request path reaches the disk. */
function readBuild(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const type = TYPES[path.extname(entry.name)];
        if (type) files.set(path.relative(dir, full).split(path.sep).join('/'), { type, body: fs.readFileSync(full) });
      }
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return files;
}

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('x-frame-options', 'DENY');
}

/** Serves the DPO, reviewer and auditor consoles under `/console/`. */
export function registerConsole(app: FastifyInstance, dir: string = DEFAULT_CONSOLE_DIR): void {
  const files = readBuild(dir);
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/'));
  app.get('/console/*', { schema: { hide: true } }, async (request, reply) => {
    const wanted = (request.params as { '*': string })['*'] || 'index.html';
    const file = files.get(wanted);
    if (!file) {
      if (files.size === 0) {
        return secure(reply)
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The consoles are not built: run `npm run build:console`.\n');
      }
      return secure(reply).code(404).type('text/plain; charset=utf-8').send('not found\n');
    }
    // Hashed asset names never change content; the page itself is re-read so a new build takes effect.
    const cache = wanted.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-store';
    return secure(reply).header('cache-control', cache).type(file.type).send(file.body);
  });
}
