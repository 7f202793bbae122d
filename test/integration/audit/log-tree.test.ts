/**
 * The audit log's Merkle tree and signed checkpoints on the real local FerretDB: a checkpoint commits to the whole
 * chain, every entry proves its inclusion under it, every later checkpoint proves it extends every earlier one,
 * writers racing to extend one tree agree on every leaf, and a chain rewritten under a stored tree is refused.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import type { Runtime } from '../../../app/runtime.js';
import { createMongoAuditLog } from '../../../src/governance/audit/mongo-audit-log.js';
import type { AuditEntry, AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import { auditLeaf, createMongoLogTree } from '../../../src/governance/audit/log-tree/log-tree-store.js';
import {
  createCheckpointStore,
  type SignedCheckpoint,
} from '../../../src/governance/audit/log-tree/checkpoint-store.js';
import type { Hash } from '../../../src/governance/audit/log-tree/merkle-tree.js';
import { verifyConsistency, verifyInclusion } from '../../../src/governance/audit/log-tree/merkle-verify.js';
import { noteVerifier, openNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import { parseCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { startCheckpointPublisher } from '../../../src/governance/audit/log-tree/checkpoint-publisher.js';
import { createSigner } from '../../../src/governance/certificates/signing.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { chainLinkId } from '../../../src/substrate/mongo/hash-chain.js';
import { testRuntime, uniqueId } from '../../support/harness.js';
import { auditEntries, naiveRoot } from '../../support/audit-entries.js';

let runtime: Runtime;
let audit: AuditLog;
const signer = createSigner(generateKeyPairSync('ed25519').privateKey);

const entriesOf = auditEntries;

const rootOf = naiveRoot;

async function chain(tenant: string): Promise<AuditEntry[]> {
  const all: AuditEntry[] = [];
  for await (const e of audit.entries(tenant)) all.push(e);
  return all;
}

const b64 = (h: Hash) => Buffer.from(h).toString('base64');
const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const storeFor = (tree = createMongoLogTree(runtime.db)) =>
  createCheckpointStore(runtime.db, { audit, tree, signer, origin: 'lethe.test/audit' });

beforeAll(() => {
  runtime = testRuntime();
  audit = createMongoAuditLog(runtime.db);
});
afterAll(async () => {
  await runtime.close();
});

describe("a tenant's signed checkpoints", () => {
  const tenant = uniqueId('t');
  const checkpoints: SignedCheckpoint[] = [];

  beforeAll(async () => {
    const store = storeFor();
    for (const n of [1, 2, 5, 17, 40]) {
      await audit.appendMany(entriesOf(tenant, n, checkpoints.length * 100));
      checkpoints.push((await store.publish(tenant))!);
    }
  });

  it('commit to the whole chain: the signed root is the one recomputed from every exported entry', async () => {
    const all = await chain(tenant);
    const last = checkpoints.at(-1)!;
    expect(last.size).toBe(all.length);
    expect(last.root).toBe(b64(rootOf(all.map(auditLeaf))));
    const store = storeFor();
    const text = openNote(last.note, [noteVerifier(store.verifierKeyOf(tenant))]);
    expect(parseCheckpoint(text!)).toMatchObject({ origin: `lethe.test/audit/${tenant}`, size: all.length });
  });

  it('prove every entry in every checkpoint, and no entry at another place', async () => {
    const all = await chain(tenant);
    const tree = createMongoLogTree(runtime.db);
    for (const c of checkpoints) {
      for (let index = 0; index < c.size; index++) {
        const proof = await tree.inclusion(tenant, index, c.size);
        expect(verifyInclusion(auditLeaf(all[index]!), index, c.size, proof, bytes(c.root)), `${index}/${c.size}`).toBe(
          true,
        );
        if (c.size > 1)
          expect(verifyInclusion(auditLeaf(all[index]!), (index + 1) % c.size, c.size, proof, bytes(c.root))).toBe(
            false,
          );
      }
    }
  });

  it('prove each checkpoint extends each earlier one', async () => {
    const tree = createMongoLogTree(runtime.db);
    for (const [i, earlier] of checkpoints.entries()) {
      for (const later of checkpoints.slice(i)) {
        const proof = await tree.consistency(tenant, earlier.size, later.size);
        expect(
          verifyConsistency(earlier.size, later.size, proof, bytes(earlier.root), bytes(later.root)),
          `${earlier.size} → ${later.size}`,
        ).toBe(true);
      }
    }
  });

  it('are kept once per size: publishing again without growth gives back the same note', async () => {
    const again = await storeFor().publish(tenant);
    expect(again).toEqual(checkpoints.at(-1));
    expect(await storeFor().latest(tenant)).toEqual(checkpoints.at(-1));
  });
});

describe('writers racing to extend one tree', () => {
  it('agree on every leaf while entries keep arriving: every checkpoint extends every earlier one', async () => {
    const tenant = uniqueId('t');
    // Five stores over separate trees stand for five processes (two APIs' worth of appends, three publishers).
    const stores = Array.from({ length: 3 }, () => storeFor(createMongoLogTree(runtime.db)));
    const appenders = Array.from({ length: 2 }, () => createMongoAuditLog(runtime.db));
    const published: SignedCheckpoint[] = [];
    let appending = true;
    const writing = (async () => {
      for (let round = 0; round < 12; round++)
        await Promise.all(appenders.map((a, w) => a.appendMany(entriesOf(tenant, 7, round * 100 + w * 10))));
      appending = false;
    })();
    const publishing = stores.map(async (store) => {
      while (appending) {
        const c = await store.publish(tenant);
        if (c) published.push(c);
      }
      published.push((await store.publish(tenant))!);
    });
    await Promise.all([writing, ...publishing]);

    const all = await chain(tenant);
    expect(all).toHaveLength(12 * 2 * 7);
    const docs = await runtime.db.collection(Collections.auditTree).countDocuments({ tenant });
    expect(docs).toBe(all.length);
    const final = published.reduce((a, b) => (b.size > a.size ? b : a));
    expect(final.size).toBe(all.length);
    expect(final.root).toBe(b64(rootOf(all.map(auditLeaf))));
    const tree = createMongoLogTree(runtime.db);
    const sizes = [...new Map(published.map((c) => [c.size, c])).values()].sort((a, b) => a.size - b.size);
    expect(sizes.length).toBeGreaterThan(1);
    for (const c of sizes) {
      expect(c.root, `size ${c.size}`).toBe(b64(rootOf(all.slice(0, c.size).map(auditLeaf))));
      const proof = await tree.consistency(tenant, c.size, final.size);
      expect(verifyConsistency(c.size, final.size, proof, bytes(c.root), bytes(final.root))).toBe(true);
    }
  }, 180_000);
});

describe('a rewritten chain', () => {
  it('cannot be checkpointed over the stored tree, and a tree rebuilt from it proves no consistency', async () => {
    const tenant = uniqueId('t');
    await audit.appendMany(entriesOf(tenant, 9));
    const before = (await storeFor().publish(tenant))!;
    const entries = runtime.db.collection<{ _id: string; hash: string }>(Collections.audit);
    const third = await entries.findOne({ _id: chainLinkId(tenant, 3) });
    // An operator rewrites entry 3 (and re-seals it, so the chain's own check would need the whole export).
    await entries.updateOne({ _id: chainLinkId(tenant, 3) }, { $set: { hash: 'f'.repeat(64) } });

    // A writer that rebuilds the tree from the rewritten chain (here: from leaf 2 on, as if those leaves had never
    // been stored) computes the leaves after it differently from those that stand: the store refuses them.
    const trees = runtime.db.collection<{ _id: string }>(Collections.auditTree);
    await trees.deleteMany({ _id: { $in: [3, 4, 5, 6, 7].map((seq) => chainLinkId(tenant, seq)) } });
    expect(await createMongoLogTree(runtime.db).size(tenant)).toBe(2);
    await expect(
      createMongoLogTree(runtime.db).extend(tenant, audit.entries(tenant, { fromSeq: 1, toSeq: 9 })),
    ).rejects.toThrow(/differs from the stored one/);

    // With the whole tree dropped and rebuilt over the rewritten chain, the new checkpoint extends nothing signed.
    await trees.deleteMany({ tenant });
    await runtime.db.collection(Collections.auditCheckpoints).deleteMany({ tenant });
    await runtime.db.collection(Collections.auditTenants).deleteMany({ tenant });
    await audit.appendMany(entriesOf(tenant, 2, 50));
    const after = (await storeFor().publish(tenant))!;
    const proof = await createMongoLogTree(runtime.db).consistency(tenant, before.size, after.size);
    expect(verifyConsistency(before.size, after.size, proof, bytes(before.root), bytes(after.root))).toBe(false);
    expect(third).not.toBeNull();
  });
});

describe('the checkpoint round', () => {
  // A database of its own: a round visits every registered tenant, and other tests' tenants are not this test's.
  let scratch: Db;
  let scratchAudit: AuditLog;
  beforeAll(async () => {
    scratch = runtime.mongo.db(`${runtime.config.mongo.dbName}_${uniqueId('logtree')}`);
    const log = createMongoAuditLog(scratch);
    await log.ensureIndexes();
    scratchAudit = log;
  });
  afterAll(async () => {
    await scratch.dropDatabase();
  });
  const scratchStore = () =>
    createCheckpointStore(scratch, { audit: scratchAudit, tree: createMongoLogTree(scratch), signer, origin: 'o' });

  it('signs a checkpoint for each log that grew, and none for a log that did not', async () => {
    const [a, b] = [uniqueId('t'), uniqueId('t')];
    await scratchAudit.appendMany([...entriesOf(a, 3), ...entriesOf(b, 2)]);
    expect(await scratchStore().publishAll()).toHaveLength(2);
    expect(await scratchStore().publishAll()).toHaveLength(0);
    await scratchAudit.appendMany(entriesOf(b, 4, 10));
    expect(await scratchStore().publishAll()).toHaveLength(1);
    expect((await scratchStore().latest(a))?.size).toBe(3);
    expect((await scratchStore().latest(b))?.size).toBe(6);
  });

  it("runs in the worker's loop: a log that grows is checkpointed within a round, and stop waits for the round", async () => {
    const tenant = uniqueId('t');
    const publisher = startCheckpointPublisher({ checkpoints: scratchStore(), everyMs: 200, log: quietLog });
    try {
      await scratchAudit.appendMany(entriesOf(tenant, 5));
      const deadline = Date.now() + 20_000;
      while ((await scratchStore().latest(tenant))?.size !== 5 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect((await scratchStore().latest(tenant))?.size).toBe(5);
    } finally {
      await publisher.stop();
    }
  });
});

const quietLog = { warn: () => undefined, debug: () => undefined };
