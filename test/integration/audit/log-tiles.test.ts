/**
 * The audit log as C2SP tlog-tiles, read by filippo.io/torchwood's tlog client (`test/support/tlog-tiles-check`), a
 * client written apart from Lethe's: it opens the checkpoint with the log's key, reads every entry from the entries
 * tiles checked against the checkpoint's root, and proves records from the hash tiles alone. A tile whose bytes
 * disagree with the signed root is caught by the client, whichever tile it is.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { auditEntries } from '../../support/audit-entries.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { chainLinkId } from '../../../src/substrate/mongo/hash-chain.js';
import type { LogTreeDoc } from '../../../src/governance/audit/log-tree/log-tree-store.js';

const programDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../support/tlog-tiles-check');

interface Answer {
  size: number;
  root: string;
  entries: string[];
  entriesError: string;
  proved: number;
  proveError: string;
}

/** Three full tiles of entries and a partial one: hash tiles at levels 0 and 1, full and partial. */
const ENTRIES = 3 * 256 + 70;

describe("the audit log's tiles, read by torchwood's tlog client", () => {
  let app: TestApp;
  let base: string;
  let program: string;
  let dir: string;

  beforeAll(async () => {
    app = await startTestApp();
    await app.api.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.api.server.address() as AddressInfo).port}`;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlog-tiles-check-'));
    program = path.join(dir, 'tlog-tiles-check');
    execFileSync('go', ['build', '-o', program, '.'], { cwd: programDir, stdio: 'pipe' });
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A tenant whose log holds `n` entries under a published checkpoint. */
  const loggedTenant = async (n: number) => {
    const tenant = uniqueTenant();
    for (let i = 0; i < n; i += 500) await app.services.audit.appendMany(auditEntries(tenant, Math.min(500, n - i), i));
    expect((await app.services.checkpoints.publish(tenant))?.size).toBe(n);
    return tenant;
  };
  const read = async (tenant: string, prove: number[]): Promise<Answer> => {
    const request = {
      base: `${base}/v1/tenants/${tenant}/audit/log/`,
      token: await app.token(tenant, ['auditor']),
      verifierKey: app.services.checkpoints.verifierKeyOf(tenant),
      prove,
    };
    // Not execFileSync: the API answering the client runs in this process, and must not be blocked.
    const out = await new Promise<string>((resolve, reject) => {
      const child = execFile(program, [], { encoding: 'utf8' }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(stdout),
      );
      child.stdin!.end(JSON.stringify(request));
    });
    return JSON.parse(out) as Answer;
  };
  const chainHashes = async (tenant: string) => {
    const hashes: string[] = [];
    for await (const entry of app.services.audit.entries(tenant)) hashes.push(entry.hash);
    return hashes;
  };
  const tile = async (tenant: string, tilePath: string, roles: ('auditor' | 'agent')[] = ['auditor']) =>
    app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/audit/log/${tilePath}`,
      token: await app.token(tenant, roles),
    });

  it('serves every entry, each checked against the signed root, and proofs from the hash tiles alone', async () => {
    const tenant = await loggedTenant(ENTRIES);
    const answer = await read(tenant, [0, 1, 255, 256, 511, 512, 767, 768, ENTRIES - 1]);
    expect(answer.entriesError).toBe('');
    expect(answer.size).toBe(ENTRIES);
    expect(answer.root).toBe((await app.services.checkpoints.latest(tenant))!.root);
    expect(answer.entries).toEqual(await chainHashes(tenant));
    expect(answer.proveError).toBe('');
    expect(answer.proved).toBe(9);
  });

  it('is caught by the client when an entry under the checkpoint was rewritten in the store', async () => {
    const tenant = await loggedTenant(300);
    await app.runtime.db
      .collection<{ _id: string; hash: string }>(Collections.audit)
      .updateOne({ _id: chainLinkId(tenant, 200) }, { $set: { hash: 'f'.repeat(64) } });
    const answer = await read(tenant, []);
    // The client checks each entry against the hash tiles before it yields it: it stops at the rewritten one.
    expect(answer.entriesError).not.toBe('');
    expect(answer.entries).toEqual((await chainHashes(tenant)).slice(0, 199));
  });

  it('is caught by the client when a stored subtree hash was changed', async () => {
    const tenant = await loggedTenant(600);
    // Leaf 511 completes the second subtree of 256 leaves: its hash at tree level 8 is what the level-1 tile lists.
    const trees = app.runtime.db.collection<LogTreeDoc>(Collections.auditTree);
    const doc = (await trees.findOne({ _id: chainLinkId(tenant, 512) }))!;
    const hashes = [...doc.hashes];
    hashes[8] = Buffer.alloc(32, 7).toString('base64');
    await trees.updateOne({ _id: doc._id }, { $set: { hashes } });
    const answer = await read(tenant, [520]);
    expect(answer.proved).toBe(0);
    expect(answer.proveError).toMatch(/record 520/u);
  });

  it('marks tiles as cacheable for good, and refuses a malformed path naming the tile', async () => {
    const tenant = await loggedTenant(5);
    const partial = await tile(tenant, 'tile/entries/000.p/5');
    expect(partial.statusCode).toBe(200);
    expect(partial.headers['cache-control']).toContain('immutable');
    expect(partial.rawPayload.length).toBe(5 * 34);
    expect(partial.rawPayload.subarray(2, 34).toString('hex')).toBe((await chainHashes(tenant))[0]);

    const malformed = await tile(tenant, 'tile/0/5');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json<{ error: { field?: string; message: string } }>().error).toMatchObject({
      field: 'tile',
      message: expect.stringContaining('three-digit groups'),
    });
    const oddBytes = await tile(tenant, 'tile/%00/000');
    expect(oddBytes.statusCode).toBe(400);
    expect(oddBytes.json<{ error: { message: string } }>().error.message).toContain('control characters');
  });

  it('serves no tile the tree does not hold whole yet, and none to a role that may not export the audit', async () => {
    const tenant = await loggedTenant(5);
    expect((await tile(tenant, 'tile/entries/000.p/6')).statusCode).toBe(404);
    expect((await tile(tenant, 'tile/0/000')).statusCode).toBe(404);
    expect((await tile(tenant, 'tile/1/000.p/1')).statusCode).toBe(404);
    expect((await tile(tenant, 'tile/entries/000.p/5', ['agent'])).statusCode).toBe(403);
    const other = uniqueTenant();
    const crossTenant = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/audit/log/tile/entries/000.p/5`,
      token: await app.token(other, ['auditor']),
    });
    expect(crossTenant.statusCode).toBe(403);
    const checkpoint = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/audit/log/checkpoint`,
      token: await app.token(tenant, ['auditor']),
    });
    expect(checkpoint.statusCode).toBe(200);
    expect(checkpoint.body.split('\n').slice(1, 2)).toEqual(['5']);
  });
});
