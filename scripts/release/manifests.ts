/** The release's package.json and package-lock.json: the checkout's, with the production dependencies only. */
import { RELEASE_BINS } from './bin-entries.js';

export interface Manifest {
  name: string;
  version: string;
  description?: string;
  engines?: Record<string, string>;
  dependencies: Record<string, string>;
  [field: string]: unknown;
}

export interface LockEntry {
  dev?: boolean;
  devOptional?: boolean;
  link?: boolean;
  resolved?: string;
  [field: string]: unknown;
}

export interface Lockfile {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
  [field: string]: unknown;
}

export function productionManifest(manifest: Manifest): Manifest {
  return {
    name: manifest.name,
    version: manifest.version,
    private: true,
    ...(manifest.description ? { description: manifest.description } : {}),
    type: 'module',
    ...(manifest.engines ? { engines: manifest.engines } : {}),
    bin: RELEASE_BINS,
    dependencies: manifest.dependencies,
  };
}

const isDevOnly = (entry: LockEntry | undefined) => Boolean(entry?.dev || entry?.devOptional);

/**
 * The checkout's lockfile without what only development needs: `npm ci` refuses a lockfile whose root entry
 * disagrees with package.json, and the entries npm marked `dev` are exactly the packages no production dependency
 * reaches. So the release installs the same versions, resolved and hashed, that the checkout was tested with. A
 * link to a package in the checkout (the Node the scripts run on, scripts/node-runtime) goes with its target.
 */
export function productionLockfile(lock: Lockfile): Lockfile {
  if (lock.lockfileVersion < 2)
    throw new Error(`package-lock.json: lockfileVersion ${lock.lockfileVersion} has no "packages"`);
  const packages: Record<string, LockEntry> = {};
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === '') {
      const root = { ...entry };
      delete root.devDependencies;
      packages[key] = { ...root, bin: RELEASE_BINS };
    } else if (!isDevOnly(entry) && !(entry.link && entry.resolved && isDevOnly(lock.packages[entry.resolved]))) {
      packages[key] = entry;
    }
  }
  return { ...lock, packages };
}
