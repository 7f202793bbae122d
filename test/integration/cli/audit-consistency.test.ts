/**
 * `lethe audit checkpoint` and `lethe audit check-consistency`, as an auditor runs them between two visits: two
 * checkpoints of a log that only grew are joined (exit 0); a checkpoint signed over a rewritten past, with the
 * operator's own key, is refused (exit 7), as is one signed by another key; a malformed key is a usage error (2).
 * With witnesses required, the later checkpoint must carry enough valid cosignatures by the keys given (else 7).
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
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

async function lethe(args: string[], of = tenant): Promise<ProcessRun> {
  const token = await app.token(of, ['auditor'], 'aud-1');
  return runLethe(args, { env: { ...env, LETHE_TOKEN: token } });
}
const describeRun = (run: ProcessRun) => `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;

async function saveCheckpoint(name: string, of = tenant): Promise<string> {
  const run = await lethe(['audit', 'checkpoint'], of);
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

describe('lethe audit check-consistency with witnesses required', () => {
  const witnessed = uniqueTenant();
  let key: string;
  let witnessKey: string;
  let first: string;
  let second: string;

  beforeAll(async () => {
    // The stack's witness, as the test app's configuration names it (development default).
    witnessKey = app.runtime.config.log.witnesses.find((w) => w.name === 'stack')!.key;
    for (const [n, from] of [
      [4, 0],
      [6, 4],
    ] as const) {
      await app.services.audit.appendMany(auditEntries(witnessed, n, from));
      const published = (await app.services.checkpoints.publish(witnessed))!;
      expect(await app.services.witnesses([published])).toEqual({ cosigned: 1, failed: 0 });
    }
    first = await saveCheckpoint('witnessed-first.note', witnessed);
    key = app.services.checkpoints.verifierKeyOf(witnessed);
    await app.services.audit.appendMany(auditEntries(witnessed, 3, 10));
    await app.services.witnesses([(await app.services.checkpoints.publish(witnessed))!]);
    second = await saveCheckpoint('witnessed-second.note', witnessed);
  });

  it("prints the checkpoint with the witness's cosignature line under the log's signature", () => {
    const lines = fs.readFileSync(second, 'utf8').split('\n');
    const signatures = lines.slice(lines.indexOf('') + 1).filter(Boolean);
    expect(signatures).toHaveLength(2);
    expect(signatures[1]!.startsWith(`— ${witnessKey.split('+')[0]} `)).toBe(true);
  });

  it('passes when the witnesses given cosigned the later checkpoint, and fails with exit 7 when too few did', async () => {
    const check = (...extra: string[]) =>
      lethe(['audit', 'check-consistency', first, second, '--key', key, ...extra], witnessed);
    const ok = await check('--witness-key', witnessKey);
    expect(ok.code, describeRun(ok)).toBe(0);
    // A second witness the auditor trusts never saw the log: one of two is enough only when one is required.
    const stranger = strangerWitnessKey();
    const both = await check('--witness-key', witnessKey, '--witness-key', stranger);
    expect(both.code, describeRun(both)).toBe(7);
    expect(both.stdout).toContain('cosigned by 1 of the witnesses given, fewer than 2');
    const oneOfTwo = await check('--witness-key', witnessKey, '--witness-key', stranger, '--min-cosignatures', '1');
    expect(oneOfTwo.code, describeRun(oneOfTwo)).toBe(0);
    const strangerOnly = await check('--witness-key', stranger);
    expect(strangerOnly.code, describeRun(strangerOnly)).toBe(7);
  });

  it('fails with exit 7 when the cosignature line was tampered with, and refuses options that do not add up (2)', async () => {
    const tampered = path.join(dir, 'witnessed-tampered.note');
    const text = fs.readFileSync(second, 'utf8');
    const last = text.trimEnd().split('\n').at(-1)!;
    const flipped = last.slice(0, -6) + (last.at(-6) === 'A' ? 'B' : 'A') + last.slice(-5);
    fs.writeFileSync(tampered, text.replace(last, flipped));
    const run = await lethe(
      ['audit', 'check-consistency', first, tampered, '--key', key, '--witness-key', witnessKey],
      witnessed,
    );
    expect(run.code, describeRun(run)).toBe(7);
    for (const extra of [
      ['--min-cosignatures', '1'],
      ['--witness-key', key],
      ['--witness-key', witnessKey, '--min-cosignatures', '2'],
      ['--witness-key', witnessKey, '--min-cosignatures', '0'],
    ]) {
      const refused = await lethe(['audit', 'check-consistency', first, second, '--key', key, ...extra], witnessed);
      expect(refused.code, `${extra.join(' ')}: ${describeRun(refused)}`).toBe(2);
    }
  });
});

/** A cosignature/v1 key of a witness that cosigned nothing here. */
function strangerWitnessKey(): string {
  const name = 'stranger.example/witness';
  const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const typed = Buffer.concat([Buffer.of(0x04), raw]);
  const id = createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), typed]))
    .digest()
    .subarray(0, 4);
  return `${name}+${id.toString('hex')}+${typed.toString('base64')}`;
}
