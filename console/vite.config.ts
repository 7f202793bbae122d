import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The consoles are static files the API serves under /console/. The shared verifiers are bundled as they are;
 * only their two crypto modules are swapped for browser ones (pure-JS SHA-256, WebCrypto Ed25519).
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
