/**
 * `lethe audit checkpoint` and `lethe audit check-consistency`, as an auditor runs them between two visits: two
 * checkpoints of a log that only grew are joined (exit 0); a checkpoint signed over a rewritten past, with the
 * operator's own key, is refused (exit 7), as is one signed by another key; a malformed key is a usage error (2).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { chainLinkId } from '../../../src/substrate/mongo/hash-chain.js';
import { createCheckpointStore } from '../../../src/governance/audit/log-tree/checkpoint-store.js';
import { createMongoLogTree } from '../../../src/governance/audit/log-tree/log-tree-store.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { auditEntries } from '../../support/audit-entries.js';
import { cliEnvironment, listenOnRealPort, runLethe, type ProcessRun } from '../../support/cli-process.js';

let app: TestApp;
let env: NodeJS.ProcessEnv;
let dir: string;
const tenant = uniqueTenant();

const entriesOf = (n: number, from: number) => auditEntries(tenant, n, from);

async function lethe(args: string[]): Promise<ProcessRun> {
  const token = await app.token(tenant, ['auditor'], 'aud-1');
  return runLethe(args, { env: { ...env, LETHE_TOKEN: token } });
}
const describeRun = (run: ProcessRun) => `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;

async function saveCheckpoint(name: string): Promise<string> {
  const run = await lethe(['audit', 'checkpoint']);
  expect(run.code, describeRun(run)).toBe(0);
  const file = path.join(dir, name);
  fs.writeFileSync(file, run.stdout);
  return file;
}

beforeAll(async () => {
  app = await startTestApp();
  env = cliEnvironment(app, await listenOnRealPort(app));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-consistency-'));
}, 120_000);
afterAll(async () => {
  await app?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('lethe audit check-consistency', () => {
  let key: string;
  let first: string;
  let second: string;

  beforeAll(async () => {
    await app.services.audit.appendMany(entriesOf(5, 0));
    await app.services.checkpoints.publish(tenant);
    first = await saveCheckpoint('first.note');
    await app.services.audit.appendMany(entriesOf(9, 5));
    await app.services.checkpoints.publish(tenant);
    second = await saveCheckpoint('second.note');
    key = app.services.checkpoints.verifierKeyOf(tenant);
  });

  it('joins two checkpoints of a log that only grew', async () => {
    const run = await lethe(['audit', 'check-consistency', first, second, '--key', key]);
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toContain(`grew from 5 to ${5 + 9}`);
    const same = await lethe(['audit', 'check-consistency', second, second, '--key', key]);
    expect(same.code, describeRun(same)).toBe(0);
  });

  it('refuses a checkpoint the operator signed over a rewritten past, with exit 7', async () => {
    // The operator rewrites entry 2, rebuilds the tree and signs anew with the log's own key.
    const audit = app.runtime.db.collection<{ _id: string; hash: string }>(Collections.audit);
    await audit.updateOne({ _id: chainLinkId(tenant, 2) }, { $set: { hash: 'e'.repeat(64) } });
    for (const name of [Collections.auditTree, Collections.auditCheckpoints, Collections.auditTenants])
      await app.runtime.db.collection(name).deleteMany({ tenant });
    await app.services.audit.appendMany(entriesOf(2, 14));
    const rebuilt = createCheckpointStore(app.runtime.db, {
      audit: app.services.audit,
      tree: createMongoLogTree(app.runtime.db),
      signer: app.services.signer,
      origin: app.runtime.config.log.origin,
    });
    await rebuilt.publish(tenant);
    const forked = await saveCheckpoint('forked.note');

    const run = await lethe(['audit', 'check-consistency', second, forked, '--key', key]);
    expect(run.code, describeRun(run)).toBe(7);
    expect(run.stdout).toContain('forked');
    // Backwards, the smaller checkpoint second is refused as well.
    const backwards = await lethe(['audit', 'check-consistency', forked, first, '--key', key]);
    expect(backwards.code, describeRun(backwards)).toBe(7);
  });

  it('refuses a checkpoint signed by another key (exit 7), and a malformed key or a missing file (exit 2)', async () => {
    const other = key.replace(/^[^+]+/, 'another.example/audit');
    const foreign = await lethe(['audit', 'check-consistency', first, second, '--key', other]);
    // A key under another name does not add up (its id hashes the name): a usage error, named.
    expect(foreign.code, describeRun(foreign)).toBe(2);
    expect(foreign.stderr).toContain('--key');
    const garbled = await lethe(['audit', 'check-consistency', first, second, '--key', 'not-a-key']);
    expect(garbled.code, describeRun(garbled)).toBe(2);
    const missing = await lethe(['audit', 'check-consistency', first, path.join(dir, 'none'), '--key', key]);
    expect(missing.code, describeRun(missing)).toBe(2);
    const tampered = path.join(dir, 'tampered.note');
    fs.writeFileSync(tampered, fs.readFileSync(second, 'utf8').replace(/\n14\n/, '\n15\n'));
    const run = await lethe(['audit', 'check-consistency', first, tampered, '--key', key]);
    expect(run.code, describeRun(run)).toBe(7);
    expect(run.stdout).toContain('not signed');
  });
});
