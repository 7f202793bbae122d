import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PolicyDocument, PolicyRule } from '../../../src/governance/policy/evaluate.js';

/** A small, valid policy; tests change one thing about it. */
export function policyWith(rules: PolicyRule[], overrides: Partial<PolicyDocument> = {}): PolicyDocument {
  return {
    id: 'sample',
    version: 1,
    description: 'a sample policy for tests',
    variables: { roles: 'string[]', ground: 'string', tier: 'number', flag: 'boolean' },
    outcomes: ['allow', 'deny'],
    default: 'deny',
    rules,
    ...overrides,
  };
}

export function rule(id: string, when: unknown, outcome = 'allow'): PolicyRule {
  return { id, outcome, when, reason: `${id} reason` };
}

const created: string[] = [];

/** A fresh policy directory with the given files (relative path → JSON value, or raw text). */
export function policyDir(files: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-policies-'));
  created.push(dir);
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

/** Removes the directories `policyDir` made. */
export function removePolicyDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
