/**
 * An erasure's certificate carries its place in the audit log, and `lethe verify --log-key` checks it with no chain:
 * the honest one passes; one changed byte in the certificate, the entry, the proof or the checkpoint is refused
 * (exit 7) naming which; an anchor the operator built over a rewritten history, signed with the log's own key, is
 * refused against the checkpoint an auditor kept of the real log; and an issue retried after a crash in the middle
 * of anchoring writes one audit entry.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';
import { formatCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { createCheckpointStore } from '../../../src/governance/audit/log-tree/checkpoint-store.js';
import { auditLeaf, logAnchor } from '../../../src/governance/audit/log-tree/log-anchor.js';
import { createLogAnchors, type LogAnchors } from '../../../src/governance/audit/log-tree/log-anchors.js';
import { createMongoLogTree } from '../../../src/governance/audit/log-tree/log-tree-store.js';
import { inclusionProof } from '../../../src/governance/audit/log-tree/merkle-tree.js';
import { noteSigner, signNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import {
  anchoredCertificate,
  verifyAnchoredCertificate,
  type AnchoredCertificate,
} from '../../../src/governance/certificates/anchored-certificate.js';
import { createMongoCertificateStore } from '../../../src/governance/certificates/certificate-store.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { naiveRoot } from '../../support/audit-entries.js';
import { cliEnvironment, listenOnRealPort, runLethe, type ProcessRun } from '../../support/cli-process.js';
import { buildSubjectGraph, completeErasure, fileErasure, type SubjectGraph } from '../../support/erasure-fixture.js';
import { resealAudit, sampleInput } from '../../unit/certificates/certificate-fixtures.js';
import { cosignerKey } from '../../support/witness-keys.js';

let app: TestApp;
let env: NodeJS.ProcessEnv;
let dir: string;
let graph: SubjectGraph;
let anchored: AnchoredCertificate;
let logKey: string;
let keyFile: string;
let certificateFile: string;

const describeRun = (run: ProcessRun) => `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
const write = (name: string, value: unknown) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof value === 'string' ? value : canonicalJson(value));
  return file;
};

async function lethe(args: string[]): Promise<ProcessRun> {
  const token = await app.token(graph.tenant, ['auditor'], 'aud-1');
  return runLethe(args, { env: { ...env, LETHE_TOKEN: token } });
}

const verify = (file: string, ...more: string[]) =>
  lethe(['verify', file, '--public-key', keyFile, '--log-key', logKey, ...more]);

beforeAll(async () => {
  app = await startTestApp();
  env = cliEnvironment(app, await listenOnRealPort(app));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-log-anchor-'));
  graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
  const requestId = await fileErasure(app, graph.tenant, { subjectId: graph.subject });
  const settled = await completeErasure(app, graph.tenant, requestId, 'extend');
  expect(settled.state).toBe('completed');
  logKey = app.services.checkpoints.verifierKeyOf(graph.tenant);
  keyFile = write('key.pem', app.services.publicKeyPem);
  const [certificate] = await app.services.certificates.byRequest(graph.tenant, requestId);
  const run = await lethe(['certificates', 'get', certificate!.certificateId, '--anchored']);
  expect(run.code, describeRun(run)).toBe(0);
  anchored = JSON.parse(run.stdout) as AnchoredCertificate;
  certificateFile = write('anchored.json', anchored);
}, 300_000);
afterAll(async () => {
  await app?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("an erasure's certificate against its checkpoint, without the chain", () => {
  it('verifies offline with the certificate key and the log key, and names no subject', async () => {
    expect(anchored.logAnchor.entry).toMatchObject({
      action: 'erasure.certified',
      target: anchored.certificate.certificateId,
    });
    expect(JSON.stringify(anchored)).not.toContain(graph.subject);
    expect(JSON.stringify(anchored)).not.toContain(graph.canary);
    const run = await verify(certificateFile);
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toContain(`recorded at audit seq ${anchored.logAnchor.entry.seq}`);
  });

  it('refuses one changed byte in the certificate, the entry, the proof or the checkpoint (exit 7), naming which', async () => {
    const changed = (mutate: (c: AnchoredCertificate) => void) => {
      const copy = structuredClone(anchored);
      mutate(copy);
      return copy;
    };
    const flipChar = (s: string, at: number) => `${s.slice(0, at)}${s[at] === 'A' ? 'B' : 'A'}${s.slice(at + 1)}`;
    const cases: [string, AnchoredCertificate][] = [
      ['certificate', changed((c) => (c.certificate.closure.located += 1))],
      ['entry', changed((c) => (c.logAnchor.entry.actor = 'systen'))],
      ['proof', changed((c) => (c.logAnchor.inclusionProof[0] = flipChar(c.logAnchor.inclusionProof[0]!, 5)))],
      [
        'checkpoint',
        changed(
          (c) => (c.logAnchor.checkpoint = flipChar(c.logAnchor.checkpoint, c.logAnchor.checkpoint.indexOf('\n') + 4)),
        ),
      ],
    ];
    // A single-leaf tree has an empty proof: the erasure's tenant has written far more than one entry.
    expect(anchored.logAnchor.inclusionProof.length).toBeGreaterThan(0);
    for (const [part, value] of cases) {
      const run = await verify(write(`changed-${part}.json`, value));
      expect(run.code, `${part}: ${describeRun(run)}`).toBe(7);
      expect(run.stdout, part).toContain(`FAILED (${part})`);
    }
  });

  it('refuses an anchor into a rewritten history against the checkpoint an auditor kept of the real log', async () => {
    const tenant = graph.tenant;
    // The auditor keeps the log's checkpoint (it covers the certificate's entry).
    const kept = await lethe(['audit', 'checkpoint']);
    expect(kept.code, describeRun(kept)).toBe(0);
    const keptFile = write('kept.note', kept.stdout);

    // The operator drops the tenant's first entry, reseals the rest up to the certificate's entry and signs a
    // checkpoint of that tree with the log's own key: the forked anchor checks out on its own.
    const real: AuditEntry[] = [];
    for await (const e of app.services.audit.entries(tenant, { toSeq: anchored.logAnchor.entry.seq })) real.push(e);
    const forked = resealAudit(tenant, real.slice(1));
    const leaves = forked.map(auditLeaf);
    const get = (level: number, index: number) => naiveRoot(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level));
    const log = noteSigner(app.services.checkpoints.originOf(tenant), app.services.signer);
    const note = signNote(formatCheckpoint({ origin: log.name, size: forked.length, root: naiveRoot(leaves) }), [log]);
    const entry = forked.at(-1)!;
    const fork = anchoredCertificate(
      anchored.certificate,
      logAnchor(entry, note, inclusionProof(entry.seq - 1, forked.length, get)),
    );
    const forkFile = write('forked.json', fork);
    const alone = await verify(forkFile);
    expect(alone.code, describeRun(alone)).toBe(0);

    const refused = await verify(forkFile, '--checkpoint', keptFile, '--fetch-proof');
    expect(refused.code, describeRun(refused)).toBe(7);
    expect(refused.stdout).toContain('FAILED (consistency)');
    // The honest anchor passes against the same kept checkpoint, with the proof the API gives.
    const honest = await verify(certificateFile, '--checkpoint', keptFile, '--fetch-proof');
    expect(honest.code, describeRun(honest)).toBe(0);
  });

  it('a retried issue after a crash between the audit entry and the checkpoint writes one entry and anchors the certificate', async () => {
    const tenant = uniqueTenant();
    const db = app.runtime.db;
    const checkpoints = createCheckpointStore(db, {
      audit: app.services.audit,
      tree: createMongoLogTree(db),
      signer: app.services.signer,
      origin: app.runtime.config.log.origin,
    });
    const real = createLogAnchors({ audit: app.services.audit, checkpoints, tree: createMongoLogTree(db) });
    let crashes = 1;
    const crashing: LogAnchors = {
      ...real,
      anchor: async (entry) => {
        if (crashes-- > 0) throw new Error('simulated crash before the checkpoint');
        return real.anchor(entry);
      },
    };
    const store = createMongoCertificateStore(db, {
      signer: app.services.signer,
      audit: app.services.audit,
      logAnchors: crashing,
    });
    await app.services.audit.append({
      tenant,
      actor: 'system',
      action: 'memory.created',
      target: 'mem_1',
      outcome: 'ok',
    });
    await expect(store.issue(sampleInput(tenant))).rejects.toThrow('simulated crash');
    const certificate = await store.issue(sampleInput(tenant));
    const again = await store.issue(sampleInput(tenant));
    expect(again.hash).toBe(certificate.hash);

    const entries: AuditEntry[] = [];
    for await (const e of app.services.audit.entries(tenant)) entries.push(e);
    expect(entries.filter((e) => e.action === 'erasure.certified')).toHaveLength(1);
    const first = await store.anchored(tenant, certificate.certificateId);
    const second = await store.anchored(tenant, certificate.certificateId);
    expect(second).toEqual(first);
    const verdict = await verifyAnchoredCertificate(first, {
      publicKeys: app.services.publicKeyPem,
      logKey: checkpoints.verifierKeyOf(tenant),
    });
    expect(verdict).toMatchObject({ ok: true, auditSeq: 2, checkpointSize: 2 });
  });

  it("with --witness-key, passes only once the stack's witness has cosigned the checkpoint it trusts", async () => {
    const [witness] = app.runtime.config.log.witnesses;
    expect(witness, 'the stack runs a witness, named in the test config').toBeDefined();
    const tenant = graph.tenant;
    // Nothing the witness cosigned yet: refused, naming the cosignature.
    const bare = await verify(certificateFile, '--witness-key', witness!.key);
    expect(bare.code, describeRun(bare)).toBe(7);
    expect(bare.stdout).toContain('FAILED (cosignature)');

    // The worker's round: the log grew since the certificate (the export above), its checkpoint goes to the witness.
    const latest = await app.services.checkpoints.publish(tenant);
    expect(latest!.size).toBeGreaterThan(anchored.logAnchor.entry.seq - 1);
    expect(await app.services.witnesses([latest!])).toEqual({ cosigned: 1, failed: 0 });

    // Asked again, the certificate comes proven under the cosigned checkpoint, the witness's line under the log's.
    const [certificate] = await app.services.certificates.byRequest(tenant, anchored.certificate.requestId);
    const run = await lethe(['certificates', 'get', certificate!.certificateId, '--anchored']);
    expect(run.code, describeRun(run)).toBe(0);
    const witnessed = JSON.parse(run.stdout) as AnchoredCertificate;
    expect(witnessed.logAnchor.checkpoint.startsWith(latest!.note)).toBe(true);
    expect(witnessed.logAnchor.checkpoint.length).toBeGreaterThan(latest!.note.length);
    const witnessedFile = write('witnessed.json', witnessed);
    const ok = await verify(witnessedFile, '--witness-key', witness!.key);
    expect(ok.code, describeRun(ok)).toBe(0);
    // Still one witness short of two: the second key is one no one holds.
    const stranger = cosignerKey();
    const short = await verify(witnessedFile, '--witness-key', witness!.key, '--witness-key', stranger);
    expect(short.code, describeRun(short)).toBe(7);
    expect(short.stdout).toContain('cosigned by 1 of the witnesses given, fewer than 2');
    expect(
      (await verify(witnessedFile, '--witness-key', witness!.key, '--witness-key', stranger, '--min-cosignatures', '1'))
        .code,
    ).toBe(0);

    // A checkpoint the log signed and never showed the witness, given as the one to trust: refused.
    await app.services.audit.append({ tenant, actor: 'aud-1', action: 'audit.checked', outcome: 'ok' });
    const unseen = await app.services.checkpoints.publish(tenant);
    const unseenFile = write('unseen.checkpoint', unseen!.note);
    const refused = await verify(
      witnessedFile,
      '--witness-key',
      witness!.key,
      '--checkpoint',
      unseenFile,
      '--fetch-proof',
    );
    expect(refused.code, describeRun(refused)).toBe(7);
    expect(refused.stdout).toContain('FAILED (cosignature)');
    // Bad witness options are usage errors, named.
    const badKey = await verify(witnessedFile, '--witness-key', 'not-a-key');
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('--witness-key');
    const badMin = await verify(witnessedFile, '--witness-key', witness!.key, '--min-cosignatures', '2');
    expect(badMin.code).toBe(2);
    expect(badMin.stderr).toContain('--min-cosignatures');
  });
});
