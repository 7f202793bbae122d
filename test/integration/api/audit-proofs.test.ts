/**
 * The audit log's checkpoint and proof routes, as an auditor uses them: the latest signed checkpoint opens under the
 * verifier key it names, an inclusion proof fetched over HTTP places an exported entry under it, a consistency proof
 * joins two checkpoints, the witnesses' cosignatures ride under the log's signature, and bad input is refused with
 * the field named. Other roles and other tenants get nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CheckpointViewSchema,
  ConsistencyProofSchema,
  InclusionProofSchema,
  WitnessKeysViewSchema,
} from '../../../src/shared/api-contract/audit.js';
import { auditLeaf } from '../../../src/governance/audit/log-tree/log-tree-store.js';
import { verifyConsistency, verifyInclusion } from '../../../src/governance/audit/log-tree/merkle-verify.js';
import { noteVerifier, openNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import { parseCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { cosignatureVerifier, cosignedBy } from '../../../src/governance/audit/witness/cosignature.js';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { auditEntries } from '../../support/audit-entries.js';

const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const entriesOf = auditEntries;

describe('audit checkpoints and proofs over HTTP', () => {
  let app: TestApp;
  let tenant: string;
  let auditor: string;
  let first: { size: number; root: string };
  const base = () => `/v1/tenants/${tenant}/audit`;
  const get = async (path: string, token = auditor) => app.request({ method: 'GET', url: `${base()}${path}`, token });

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    auditor = await app.token(tenant, ['auditor'], 'aud-1');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 404 while no checkpoint was published for the log', async () => {
    const none = await get('/checkpoint');
    expect(none.statusCode, none.body).toBe(404);
  });

  it("gives the latest checkpoint, signed under the key it names, over the tenant's whole chain", async () => {
    await app.services.audit.appendMany(entriesOf(tenant, 3, 0));
    first = (await app.services.checkpoints.publish(tenant))!;
    await app.services.audit.appendMany(entriesOf(tenant, 10, 3));
    await app.services.checkpoints.publish(tenant);
    const got = await get('/checkpoint');
    expect(got.statusCode, got.body).toBe(200);
    const view = CheckpointViewSchema.parse(got.json());
    const head = (await app.services.audit.head(tenant))!;
    expect(view.size).toBe(head.seq);
    const text = openNote(view.note, [noteVerifier(view.verifierKey)]);
    expect(parseCheckpoint(text!)).toMatchObject({ origin: view.origin, size: view.size });
    expect(view.origin.endsWith(`/${tenant}`)).toBe(true);
  });

  it("carries the witnesses' cosignatures as signature lines under the log's own, and lists them", async () => {
    const latest = (await app.services.checkpoints.latest(tenant))!;
    expect(await app.services.witnesses([latest])).toEqual({ cosigned: 1, failed: 0 });
    const view = CheckpointViewSchema.parse((await get('/checkpoint')).json());
    const witness = app.runtime.config.log.witnesses.find((w) => w.name === 'stack')!;
    expect(view.cosignatures).toEqual([
      {
        witness: 'stack',
        keyName: witness.key.split('+')[0],
        keyId: witness.key.split('+')[1],
        at: expect.any(String),
      },
    ]);
    expect(view.note.startsWith(latest.note)).toBe(true);
    expect(cosignedBy(view.note, [cosignatureVerifier(witness.key)])).toHaveLength(1);
    // Still the log's signed note: the cosignature is one more line its verifier skips.
    expect(openNote(view.note, [noteVerifier(view.verifierKey)])).not.toBeNull();
  });

  it('proves an exported entry under the checkpoint, and each checkpoint consistent with the later one', async () => {
    const view = CheckpointViewSchema.parse((await get('/checkpoint')).json());
    const exported = (await get('')).body
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEntry);
    const entry = exported[4]!;
    const inclusion = await get(`/proofs/inclusion?index=${entry.seq - 1}&size=${view.size}`);
    expect(inclusion.statusCode, inclusion.body).toBe(200);
    const proof = InclusionProofSchema.parse(inclusion.json());
    expect(proof.leaf).toBe(Buffer.from(auditLeaf(entry)).toString('base64'));
    expect(verifyInclusion(auditLeaf(entry), entry.seq - 1, view.size, proof.proof.map(bytes), bytes(view.root))).toBe(
      true,
    );

    const consistency = await get(`/proofs/consistency?from=${first.size}&to=${view.size}`);
    expect(consistency.statusCode, consistency.body).toBe(200);
    const joined = ConsistencyProofSchema.parse(consistency.json());
    expect(verifyConsistency(first.size, view.size, joined.proof.map(bytes), bytes(first.root), bytes(view.root))).toBe(
      true,
    );
  });

  it('refuses bad input with the field named, and sizes the tree has not reached with 404', async () => {
    const size = CheckpointViewSchema.parse((await get('/checkpoint')).json()).size;
    for (const [path, field] of [
      [`/proofs/inclusion?index=${size}&size=${size}`, 'index'],
      [`/proofs/inclusion?index=0&size=0`, 'size'],
      [`/proofs/inclusion?index=abc&size=3`, 'index'],
      [`/proofs/inclusion?index=-1&size=3`, 'index'],
      [`/proofs/inclusion?index=0&size=1e400`, 'size'],
      [`/proofs/consistency?from=5&to=4`, 'from'],
      [`/proofs/consistency?from=0&to=4`, 'from'],
    ] as const) {
      const bad = await get(path);
      expect(bad.statusCode, `${path}: ${bad.body}`).toBe(400);
      expect(bad.json<{ error: { field: string } }>().error.field, path).toBe(field);
    }
    const beyond = await get(`/proofs/consistency?from=1&to=${size + 1000}`);
    expect(beyond.statusCode, beyond.body).toBe(404);
    const odd = await get(`/proofs/inclusion?index=0&size=2&extra=1`);
    expect(odd.statusCode, odd.body).toBe(400);
  });

  it("lists the configured witnesses' names and cosignature keys, which verify the cosignatures it serves", async () => {
    const got = await get('/witnesses');
    expect(got.statusCode, got.body).toBe(200);
    const { witnesses } = WitnessKeysViewSchema.parse(got.json());
    const configured = app.runtime.config.log.witnesses;
    expect(witnesses).toEqual(configured.map((w) => ({ name: w.name, key: w.key })));
    const view = CheckpointViewSchema.parse((await get('/checkpoint')).json());
    expect(
      cosignedBy(
        view.note,
        witnesses.map((w) => cosignatureVerifier(w.key)),
      ),
    ).toHaveLength(1);
  });

  it('gives an agent nothing, and an auditor of another tenant nothing', async () => {
    const agent = await app.token(tenant, ['agent'], 'agent-1');
    for (const path of [
      '/checkpoint',
      '/witnesses',
      '/proofs/inclusion?index=0&size=1',
      '/proofs/consistency?from=1&to=2',
    ]) {
      expect((await get(path, agent)).statusCode, path).toBe(403);
      const other = await app.token(uniqueTenant(), ['auditor'], 'aud-2');
      expect((await get(path, other)).statusCode, path).toBe(403);
    }
  });
});
