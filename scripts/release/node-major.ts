/**
 * The one Node.js major Lethe runs on. `.nvmrc` names it; package.json's engines, the Dockerfile's NODE_IMAGE, the
 * runtime packages npm scripts run on (scripts/node-runtime) and @types/node must agree with it.
 */
import fs from 'node:fs';
import path from 'node:path';

const read = (repoDir: string, file: string) => fs.readFileSync(path.join(repoDir, file), 'utf8');
const majorOf = (version: string | undefined) => Number(/^[\^~v]?(\d+)(\.|$)/.exec(version ?? '')?.[1] ?? NaN);

/** The major `.nvmrc` names. */
export function projectNodeMajor(repoDir: string): number {
  const text = read(repoDir, '.nvmrc').trim();
  if (!/^\d+$/.test(text)) throw new Error(`.nvmrc holds "${text}", not a major version`);
  return Number(text);
}

/** The major of the image the Dockerfile builds from (`ARG NODE_IMAGE=node:<major>-…`). */
export function imageNodeMajor(repoDir: string): number {
  const image = /^ARG NODE_IMAGE=(\S+)/m.exec(read(repoDir, 'Dockerfile'))?.[1];
  const major = Number(/^node:(\d+)[-.]/.exec(image ?? '')?.[1] ?? NaN);
  if (!Number.isInteger(major)) throw new Error(`the Dockerfile's NODE_IMAGE is "${image}", not node:<major>-…`);
  return major;
}

interface Manifest {
  engines?: { node?: string };
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** Each place that names another major than `.nvmrc`, as a sentence; none when all agree. */
export function nodeMajorDisagreements(repoDir: string): string[] {
  const major = projectNodeMajor(repoDir);
  const manifest = JSON.parse(read(repoDir, 'package.json')) as Manifest;
  const runtime = JSON.parse(read(repoDir, 'scripts/node-runtime/package.json')) as Manifest;
  const found: string[] = [];
  if (manifest.engines?.node !== `^${major}`) {
    found.push(`package.json's engines.node is "${manifest.engines?.node}", not "^${major}"`);
  }
  const image = imageNodeMajor(repoDir);
  if (image !== major) found.push(`the Dockerfile's NODE_IMAGE is Node ${image}, not ${major}`);
  for (const [name, version] of Object.entries(runtime.optionalDependencies ?? {})) {
    if (majorOf(version) !== major) found.push(`scripts/node-runtime installs ${name}@${version}, not ${major}.x`);
  }
  const types = manifest.devDependencies?.['@types/node'];
  if (majorOf(types) !== major) found.push(`@types/node is "${types}", not ^${major}`);
  return found;
}

/** The disagreements, after the Node running this process if its major is not the image's. */
export function nodeMajorProblems(repoDir: string): string[] {
  const image = imageNodeMajor(repoDir);
  const found = nodeMajorDisagreements(repoDir);
  if (majorOf(process.versions.node) !== image) found.unshift(`this runs on Node ${process.version}, not ${image}`);
  return found;
}
