import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundleOptions } from '@temporalio/worker';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const WORKFLOWS_PATH = path.join(repoDir, 'workflows', 'index.ts');

/** ESM sources import `./x.js`; the workflow bundler must resolve those to the `.ts` files. */
export const bundlerOptions: Pick<BundleOptions, 'webpackConfigHook'> = {
  webpackConfigHook: (config) => ({
    ...config,
    resolve: { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } },
  }),
};
