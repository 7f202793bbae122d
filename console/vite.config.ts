import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The consoles are static files the API serves under /console/. The shared verifiers are bundled as they are;
 * only their crypto modules are swapped for browser ones (pure-JS SHA-256, WebCrypto Ed25519 for certificates,
 * signed notes and witness cosignatures).
 */
export default defineConfig({
  root: here,
  base: '/console/',
  publicDir: false,
  resolve: {
    alias: [
      { find: /^.*\/shared\/sha256\.js$/, replacement: path.join(here, 'src/verify/sha256.browser.ts') },
      {
        find: /^\.\/verification-key\.js$/,
        replacement: path.join(here, 'src/verify/verification-key.browser.ts'),
      },
      // The log verifiers' signed-note and cosignature checks (node:crypto) are WebCrypto's in the page.
      { find: /^\.\/signed-note\.js$/, replacement: path.join(here, 'src/verify/signed-note.browser.ts') },
      {
        find: /^\.\.\/witness\/cosignature\.js$/,
        replacement: path.join(here, 'src/verify/cosignature.browser.ts'),
      },
    ],
  },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: path.join(here, '../dist/console'),
    emptyOutDir: true,
    target: 'es2022',
    // No inline module-preload polyfill or data: URLs: the CSP allows scripts and assets from this origin only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rollupOptions: {
      // zod's sources carry `@__PURE__` notes Rollup cannot place; harmless, and not ours to fix.
      onwarn(warning, warn) {
        if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('node_modules')) return;
        warn(warning);
      },
    },
  },
});
