/**
 * Lethe's checkpoints and the local stack's independent witness (litewitness, c2sp.org/tlog-witness), both real:
 * the witness cosigns what the worker's round publishes, and its cosignature verifies under the witness's key as
 * the spec defines it; a log rewritten and re-signed with Lethe's own key is refused; a witness that is down stops
 * no checkpoint; a note with odd bytes never leaves.
 */
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import type { Runtime } from '../../../app/runtime.js';
import type { WitnessConfig } from '../../../src/config/witnesses-config.js';
import { createMongoAuditLog } from '../../../src/governance/audit/mongo-audit-log.js';
import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import { createMongoLogTree } from '../../../src/governance/audit/log-tree/log-tree-store.js';
import {
  createCheckpointStore,
  type SignedCheckpoint,
} from '../../../src/governance/audit/log-tree/checkpoint-store.js';
import { startCheckpointPublisher } from '../../../src/governance/audit/log-tree/checkpoint-publisher.js';
import { formatCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { noteSigner, signNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import { createCheckpointCosigner } from '../../../src/governance/audit/witness/checkpoint-cosigner.js';
import { createHttpWitness } from '../../../src/governance/audit/witness/http-witness.js';
import { createWitnessctlEnrolment } from '../../../src/governance/audit/witness/witnessctl-enrolment.js';
import { createWitnessRound } from '../../../src/governance/audit/witness/witness-round.js';
import type { WitnessError } from '../../../src/governance/audit/witness/witness.port.js';
import { createSigner } from '../../../src/governance/certificates/signing.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { chainLinkId } from '../../../src/substrate/mongo/hash-chain.js';
import { ErrorType } from '../../../src/shared/errors.js';
import { freePort } from '../../../stack/processes.js';
import { testConfig, testRuntime, uniqueId } from '../../support/harness.js';
import { auditEntries } from '../../support/audit-entries.js';

const ORIGIN = 'lethe.test/witnessed';
const signer = createSigner(generateKeyPairSync('ed25519').privateKey);
const quietLog = { warn: () => undefined, debug: () => undefined };

let runtime: Runtime;
// A database of its own: a publishing round visits every registered tenant, and other tests' tenants are not ours.
let scratch: Db;
let audit: AuditLog;
let witness: WitnessConfig & { enrol: NonNullable<WitnessConfig['enrol']> };

const storeOf = () =>
  createCheckpointStore(scratch, { audit, tree: createMongoLogTree(scratch), signer, origin: ORIGIN });
const cosignerFor = (w: Pick<WitnessConfig, 'name' | 'url' | 'key' | 'timeoutMs'>) =>
  createCheckpointCosigner({ witness: createHttpWitness(w), enrolment: createWitnessctlEnrolment(witness.enrol) });
const roundWith = (...cosigners: ReturnType<typeof cosignerFor>[]) =>
  createWitnessRound({ cosigners, checkpoints: storeOf(), tree: createMongoLogTree(scratch), log: quietLog });

async function until<T>(what: () => Promise<T | undefined | null>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** c2sp.org/tlog-cosignature, checked with node:crypto from the spec's text rather than with Lethe's verifier. */
function verifyCosignatureBySpec(vkey: string, checkpointText: string, line: string): boolean {
  const [name, hexId, key] = [vkey.slice(0, vkey.indexOf('+')), ...vkey.slice(vkey.indexOf('+') + 1).split(/\+(.*)/su)];
  const typed = Buffer.from(key!, 'base64');
  expect(typed[0]).toBe(0x04);
  const keyId = createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), typed]))
    .digest()
    .subarray(0, 4);
  expect(keyId.toString('hex')).toBe(hexId);
  const match = /^— (\S+) (\S+)\n$/u.exec(line);
  if (!match || match[1] !== name) return false;
  const bytes = Buffer.from(match[2]!, 'base64');
  if (bytes.length !== 76 || !bytes.subarray(0, 4).equals(keyId)) return false;
  const time = bytes.readBigUInt64BE(4);
  const message = Buffer.from(`cosignature/v1\ntime ${time}\n${checkpointText}`);
  const publicKey = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), typed.subarray(1)]),
    format: 'der',
    type: 'spki',
  });
  return verify(null, message, publicKey, bytes.subarray(12));
}

/** A new log of `size` entries whose checkpoint the stack witness cosigned, and the cosigner that got it. */
async function witnessedLog(size: number) {
  const tenant = uniqueId('t');
  await audit.appendMany(auditEntries(tenant, size));
  const published = (await storeOf().publishAll()).filter((c) => c.tenant === tenant);
  const cosigner = cosignerFor(witness);
  expect((await roundWith(cosigner)(published)).cosigned).toBe(1);
  return { tenant, cosigner };
}

/** The error a submission was refused with; a cosignature instead fails the test. */
const refusalOf = (submission: Promise<unknown>) =>
  submission.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error as WitnessError,
  );

const textOf = (note: string) => note.slice(0, note.lastIndexOf('\n\n') + 1);

beforeAll(async () => {
  runtime = testRuntime();
  // The tests run what users run: the stack's witness reaches them through the development configuration.
  const configured = testConfig().log.witnesses.find((w) => w.name === 'stack');
  if (!configured?.enrol) throw new Error('the stack witness is not configured: run `npm run stack:up`');
  witness = { ...configured, enrol: configured.enrol };
  scratch = runtime.mongo.db(`${runtime.config.mongo.dbName}_${uniqueId('witness')}`);
  const log = createMongoAuditLog(scratch);
  await log.ensureIndexes();
  audit = log;
});
afterAll(async () => {
  await scratch?.dropDatabase();
  await runtime?.close();
});

describe('the stack witness', () => {
  it("cosigns each checkpoint the worker's round publishes, and its cosignature verifies under the witness's key", async () => {
    const tenant = uniqueId('t');
    const publisher = startCheckpointPublisher({
      checkpoints: storeOf(),
      witnesses: roundWith(cosignerFor(witness)),
      everyMs: 200,
      log: quietLog,
    });
    const cosigned: SignedCheckpoint[] = [];
    try {
      for (const [n, size] of [
        [4, 4],
        [7, 11],
      ] as const) {
        await audit.appendMany(auditEntries(tenant, n, size * 10));
        cosigned.push(
          await until(async () => {
            const latest = await storeOf().latest(tenant);
            return latest?.size === size && latest.cosignatures?.stack ? latest : null;
          }),
        );
      }
    } finally {
      await publisher.stop();
    }
    for (const checkpoint of cosigned) {
      const cosignature = checkpoint.cosignatures!.stack!;
      expect(cosignature.keyName).toBe(witness.key.split('+')[0]);
      expect(verifyCosignatureBySpec(witness.key, textOf(checkpoint.note), cosignature.line)).toBe(true);
      expect(Math.abs(cosignature.timestamp - checkpoint.at.getTime() / 1000)).toBeLessThan(120);
    }
    // Over that checkpoint only: the second one's cosignature does not verify over the first's text.
    const [earlier, later] = cosigned as [SignedCheckpoint, SignedCheckpoint];
    expect(verifyCosignatureBySpec(witness.key, textOf(earlier.note), later.cosignatures!.stack!.line)).toBe(false);
  });

  it('catches up from whatever size it has seen: a worker that just started learns it from the 409 and proves from there', async () => {
    const tenant = uniqueId('t');
    await audit.appendMany(auditEntries(tenant, 5));
    const first = (await storeOf().publishAll()).filter((c) => c.tenant === tenant);
    expect((await roundWith(cosignerFor(witness))(first)).cosigned).toBe(1);
    await audit.appendMany(auditEntries(tenant, 8, 100));
    const second = (await storeOf().publishAll()).filter((c) => c.tenant === tenant);
    // A new cosigner knows nothing: it claims size 0, is told 5, and sends the proof from 5 to 13.
    expect(await roundWith(cosignerFor(witness))(second)).toEqual({ cosigned: 1, failed: 0 });
    const latest = await storeOf().latest(tenant);
    expect(latest?.size).toBe(13);
    expect(verifyCosignatureBySpec(witness.key, textOf(latest!.note), latest!.cosignatures!.stack!.line)).toBe(true);
  });

  it("refuses a fork: the log rewritten under its checkpoint and re-signed with Lethe's own key gets 422 and no cosignature", async () => {
    const { tenant, cosigner } = await witnessedLog(9);

    // Someone with the database and the signing key rewrites entry 3, drops the tree and the checkpoints, and has
    // the log publish again, past the size the witness cosigned.
    await scratch
      .collection<{ _id: string; hash: string }>(Collections.audit)
      .updateOne({ _id: chainLinkId(tenant, 3) }, { $set: { hash: 'f'.repeat(64) } });
    for (const c of [Collections.auditTree, Collections.auditCheckpoints, Collections.auditTenants])
      await scratch.collection(c).deleteMany({ tenant });
    await audit.appendMany(auditEntries(tenant, 2, 50));
    const forked = (await storeOf().publish(tenant))!;
    expect(forked.size).toBe(11);

    const refusal = await refusalOf(
      cosigner.cosign({
        note: forked.note,
        verifierKey: storeOf().verifierKeyOf(tenant),
        proofOf: (from, to) => createMongoLogTree(scratch).consistency(tenant, from, to),
      }),
    );
    expect(refusal.type).toBe(ErrorType.WitnessRefused);
    expect(refusal.witnessStatus).toBe(422);

    // Through the round, as the worker submits it (a new cosigner, told the witness's size by its 409): refused too,
    // and nothing is kept.
    expect(await roundWith(cosignerFor(witness))([forked])).toEqual({ cosigned: 0, failed: 1 });
    expect((await storeOf().latest(tenant))?.cosignatures).toBeUndefined();
  });

  it('refuses a different tree of the size it cosigned, signed by the same key', async () => {
    const { tenant, cosigner } = await witnessedLog(6);
    const origin = storeOf().originOf(tenant);
    const other = signNote(formatCheckpoint({ origin, size: 6, root: new Uint8Array(32).fill(9) }), [
      noteSigner(origin, signer),
    ]);
    const refusal = await refusalOf(
      cosigner.cosign({ note: other, verifierKey: storeOf().verifierKeyOf(tenant), proofOf: async () => [] }),
    );
    expect([refusal.type, refusal.witnessStatus]).toEqual([ErrorType.WitnessRefused, 422]);
  });
});

describe("enrolling a log with the stack witness's witnessctl", () => {
  it('adds a key once, however many enrolments race, and the witness then cosigns the log', async () => {
    const tenant = uniqueId('t');
    const origin = storeOf().originOf(tenant);
    const key = storeOf().verifierKeyOf(tenant);
    const witnessctl = (...args: string[]) =>
      promisify(execFile)(witness.enrol.witnessctl, [...args, '-db', witness.enrol.db]);
    // The witness knows the log but not this key (as after a key rotation), and five workers meet it in one round:
    // each would see the key missing and add it, and two copies of a key make litewitness refuse the log.
    await witnessctl('add-log', '-origin', origin);
    await Promise.all(Array.from({ length: 5 }, () => createWitnessctlEnrolment(witness.enrol).enrol(origin, key)));
    const { stdout } = await witnessctl('list-logs');
    const listed = stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { origin: string; keys: string[] })
      .filter((l) => l.origin === origin);
    expect(listed).toEqual([expect.objectContaining({ origin, keys: [key] })]);
    await audit.appendMany(auditEntries(tenant, 3));
    const published = (await storeOf().publishAll()).filter((c) => c.tenant === tenant);
    expect(await roundWith(cosignerFor(witness))(published)).toEqual({ cosigned: 1, failed: 0 });
  });
});

describe('a witness that is down', () => {
  it('stops no checkpoint: the log is published and the cosignature it could not give is counted as failed', async () => {
    const down = { ...witness, name: 'down', url: `http://127.0.0.1:${await freePort()}`, timeoutMs: 1000 };
    const tenant = uniqueId('t');
    const results: { cosigned: number; failed: number }[] = [];
    const round = roundWith(cosignerFor(down), cosignerFor(witness));
    const publisher = startCheckpointPublisher({
      checkpoints: storeOf(),
      witnesses: async (published) => {
        const result = await round(published.filter((c) => c.tenant === tenant));
        results.push(result);
        return result;
      },
      everyMs: 200,
      log: quietLog,
    });
    try {
      await audit.appendMany(auditEntries(tenant, 3));
      const latest = await until(async () => {
        const c = await storeOf().latest(tenant);
        return c?.cosignatures?.stack ? c : null;
      });
      expect(latest.size).toBe(3);
      expect(latest.cosignatures?.down).toBeUndefined();
      await audit.appendMany(auditEntries(tenant, 2, 10));
      await until(async () => ((await storeOf().latest(tenant))?.size === 5 ? true : null));
    } finally {
      await publisher.stop();
    }
    expect(results.filter((r) => r.cosigned + r.failed > 0)[0]).toEqual({ cosigned: 1, failed: 1 });
  });
});

describe('a witness that hangs', () => {
  let server: http.Server;
  let asked = 0;
  let url: string;
  beforeAll(async () => {
    // Accepts the request and never answers, as a stopped (SIGSTOP) or wedged witness behind a live socket would.
    server = http.createServer(() => {
      asked++;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delays a round by one timeout, not one per checkpoint, and the other witness cosigns every checkpoint', async () => {
    const tenants = Array.from({ length: 12 }, () => uniqueId('t'));
    for (const tenant of tenants) await audit.appendMany(auditEntries(tenant, 2));
    const published = (await storeOf().publishAll()).filter((c) => tenants.includes(c.tenant));
    expect(published).toHaveLength(12);
    const hung = cosignerFor({ ...witness, name: 'hung', url, timeoutMs: 2_000 });
    asked = 0;
    expect(await roundWith(hung, cosignerFor(witness))(published)).toEqual({ cosigned: 12, failed: 12 });
    // Asked for every checkpoint, four at a time, the hung witness would be sent all twelve and cost three timeouts;
    // skipped once it timed out, it is sent only the first wave (at most four), and costs one.
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(4);
  });
});

describe('a note with odd bytes', () => {
  let requests = 0;
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is refused before sending: a NUL in the origin, or an origin split over two lines', async () => {
    const cosigner = cosignerFor({ ...witness, name: 'recorder', url });
    const origin = `${ORIGIN}/t`;
    const text = formatCheckpoint({ origin, size: 1, root: new Uint8Array(32) });
    const note = signNote(text, [noteSigner(origin, signer)]);
    for (const odd of [
      note.replace(`${origin}\n`, `${origin}\u0000x\n`),
      note.replace(`${origin}\n`, `${ORIGIN}\nt\n`),
    ]) {
      const refusal = await refusalOf(
        cosigner.cosign({ note: odd, verifierKey: noteSigner(origin, signer).verifierKey, proofOf: async () => [] }),
      );
      expect(refusal.type).toBe(ErrorType.Validation);
    }
    expect(requests).toBe(0);
    // The same client sends a well-formed note (and the recorder answers 500): the count above is not vacuous.
    await cosigner
      .cosign({ note, verifierKey: noteSigner(origin, signer).verifierKey, proofOf: async () => [] })
      .catch(() => undefined);
    expect(requests).toBe(1);
  });
});
