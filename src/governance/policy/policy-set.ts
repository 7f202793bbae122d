import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PolicyDocument } from './evaluate.js';

export const POLICIES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'policies');

/** Reads every `*.json` policy in a directory, keyed by policy id. */
export function loadPolicies(dir = POLICIES_DIR): Map<string, PolicyDocument> {
  const policies = new Map<string, PolicyDocument>();
  for (const name of fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const doc = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as PolicyDocument;
    policies.set(doc.id, doc);
  }
  return policies;
}

export function requirePolicy(policies: Map<string, PolicyDocument>, id: string): PolicyDocument {
  const policy = policies.get(id);
  if (!policy) throw new Error(`policy "${id}" is not loaded from ${POLICIES_DIR}`);
  return policy;
}
