import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const tsx = path.join(repo, 'node_modules', '.bin', 'tsx');
const depcruise = path.join(repo, 'node_modules', '.bin', 'depcruise');

function checkBundle(fixture: string) {
  return spawnSync(tsx, ['scripts/check-bundle.ts', '--workflows', path.join('test', 'fixtures', 'sandbox', fixture)], {
    cwd: repo,
    encoding: 'utf8',
  });
}

describe('npm run check', () => {
  it('fails the workflow bundle when a workflow imports a Node built-in', () => {
    const result = checkBundle('imports-node-builtin.workflow.ts');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/workflow bundle failed/);
    expect(result.stderr).toMatch(/fs/);
  }, 120_000);

  it('fails the workflow bundle when a workflow imports an activity implementation', () => {
    const result = checkBundle('imports-activity-implementation.workflow.ts');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/workflow bundle failed/);
  }, 120_000);

  it('bundles a workflow that keeps to the sandbox', () => {
    const result = checkBundle('clean.workflow.ts');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  }, 120_000);

  it('fails the plane rules when a lower plane imports a higher one, or a workflow imports activity code', () => {
    const result = spawnSync(
      depcruise,
      ['--config', path.join(repo, '.dependency-cruiser.cjs'), 'src', 'app', 'workflows', 'activities'],
      { cwd: path.join(repo, 'test', 'fixtures', 'planes'), encoding: 'utf8' },
    );
    expect(result.status).not.toBe(0);
    expect(result.stdout).toMatch(
      /no-substrate-to-higher-plane: src\/substrate\/leaky-store\.ts → app\/api\/route\.ts/,
    );
    expect(result.stdout).toMatch(/contracts-fit-the-sandbox: src\/temporal\/contracts\/leaky\.contract\.ts → fs/);
    expect(result.stdout).toMatch(
      /workflow-imports-only-activity-types: workflows\/leaky\.workflow\.ts → activities\/impl\.activities\.ts/,
    );
  }, 120_000);

  it('passes the plane rules on the project itself', () => {
    const result = spawnSync(
      depcruise,
      ['--config', '.dependency-cruiser.cjs', 'src', 'app', 'workflows', 'activities', 'policies'],
      { cwd: repo, encoding: 'utf8' },
    );
    expect(result.stdout).toMatch(/no dependency violations found/);
    expect(result.status).toBe(0);
  }, 120_000);
});
