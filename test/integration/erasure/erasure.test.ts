import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import {
  searchAsWriter,
  buildSubjectGraph,
  fingerprintRecords,
  waitForState,
  type SubjectGraph,
} from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { grepFiles } from '../../support/data-files.js';
import { checkpoint, relationOf } from '../../support/postgres-cluster.js';
import { waitForMessage } from '../../../stack/smtp/mailbox.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { verifyCertificatesJsonl } from '../../../src/governance/certificates/certificate-verify.js';
import { exportAuditJsonl } from '../../../src/governance/audit/audit-export.js';
import type { Role } from '../../../src/governance/auth/principal.js';

const stack = loadStackConfig();

describe('provable erasure of a data subject', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let requestId: string;
  let controlBefore: string[];

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    controlBefore = await fingerprintRecords(app, graph.tenant, graph.control);
    // Positive control: before the erasure, the writer's search finds the subject's records by the canary.
    expect(await searchAsWriter(app, graph, graph.canary)).toEqual(expect.arrayContaining(graph.memories.slice(0, 3)));
    const dpo = await app.token(graph.tenant, ['dpo'], 'dpo-1');
    const filed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/erasure-requests`,
      token: dpo,
      payload: { selector: { subjectId: graph.subject }, legalGround: 'art17-1a' },
    });
    expect(filed.statusCode, filed.body).toBe(202);
    requestId = filed.json<{ id: string }>().id;
    await waitForState(app, graph.tenant, requestId, ['completed', 'needs-operator', 'rejected']);
  }, 240_000);
  afterAll(async () => {
    await app?.close();
  });

  it('completes all six steps and shows them with timestamps and counts, without the selector', async () => {
    const response = await app.request({
      method: 'GET',
      url: `/v1/tenants/${graph.tenant}/erasure-requests/${requestId}`,
      token: await app.token(graph.tenant, ['dpo']),
    });
    const status = response.json<{
      state: string;
      steps: { step: string; state: string; counts: Record<string, number> }[];
      counts: Record<string, number>;
      certificateIds: string[];
    }>();
    expect(status.state).toBe('completed');
    expect(status.steps.map((s) => s.step)).toEqual([
      'locate',
      'closure',
      'authorise',
      'tombstone',
      'purge',
      'expunge',
      'verify',
    ]);
    expect(status.steps.every((s) => s.state === 'done')).toBe(true);
    // Located: 2 events + 3 memories naming the subject; derived by lineage only: the depth-3 view and another subject's summary.
    expect(status.counts).toMatchObject({ located: 5, derived: 2, collateral: 2, total: 7 });
    expect(response.body).not.toContain(graph.subject);
    expect(status.certificateIds).toHaveLength(1);
  });

  it('leaves nothing of the closure reachable by id, directly in MongoDB and Elasticsearch or through the API', async () => {
    const closure = [...graph.events, ...graph.memories, graph.collateral];
    expect(await app.services.memories.getMany(graph.tenant, closure)).toEqual([]);
    expect(await app.services.events.getMany(graph.tenant, closure)).toEqual([]);
    const probe = await app.services.index.probe(graph.tenant, {
      ids: closure.filter((id) => id.startsWith('mem_')),
      text: graph.canary,
    });
    expect(probe.found).toEqual([]);
    // As the writer, who read them all before: what is gone is gone for the one principal who could see it.
    const reader = await app.token(graph.tenant, ['agent'], graph.writer);
    for (const id of graph.memories) {
      expect(
        (
          await app.request({
            method: 'GET',
            url: `/v1/tenants/${graph.tenant}/memories/${id}?intent=history`,
            token: reader,
          })
        ).statusCode,
      ).toBe(404);
    }
    expect((await searchAsWriter(app, graph, graph.canary)).filter((id) => closure.includes(id))).toEqual([]);
    // The control subject is still found by the same reader: the search itself still works.
    expect(await searchAsWriter(app, graph, 'Ben lives in Munich')).toContain(graph.control[3]);
  });

  it('leaves no deleted documents in the index segments, as they are (read, not merged)', async () => {
    const stats = await app.services.index.segmentStats(graph.tenant);
    expect(stats.segments).toBeGreaterThan(0);
    expect(stats.deletedDocs).toBe(0);
  });

  it('leaves the control set of another subject unchanged', async () => {
    expect(await fingerprintRecords(app, graph.tenant, graph.control)).toEqual(controlBefore);
    expect(controlBefore).toHaveLength(4);
  });

  it('leaves the canary in no file of Elasticsearch, the PostgreSQL tables, the Temporal database or the logs', async () => {
    await checkpoint();
    const places = {
      elasticsearch: path.join(stack.stateDir, 'elasticsearch', 'data'),
      postgresTables: path.join(stack.stateDir, 'postgres', 'data', 'base'),
      temporal: path.join(stack.stateDir, 'temporal'),
      logs: path.join(stack.stateDir, 'logs'),
    };
    for (const [place, dir] of Object.entries(places)) {
      expect(fs.existsSync(dir), place).toBe(true);
      const found = grepFiles(dir, graph.canary);
      // A table file is named by its relfilenode: say which table it is, so a failure points at a collection.
      const named =
        place === 'postgresTables'
          ? await Promise.all(found.map(async (file) => `${file} (${await relationOf(file)})`))
          : found;
      expect(named, place).toEqual([]);
    }
  });

  it('issues a certificate that verifies offline, lists the WAL at L3, names no subject and anchors in the audit chain', async () => {
    const certificates = await app.services.certificates.byRequest(graph.tenant, requestId);
    expect(certificates).toHaveLength(1);
    const certificate = certificates[0]!;
    expect(certificate.status).toBe('complete');
    expect(certificate.closure).toMatchObject({ located: 5, derived: 2, collateral: 2, total: 7 });
    // Every kind of probe ran over something, and found nothing: a certificate with no probes proves nothing.
    expect(certificate.probes.filter((p) => p.checked > 0).map((p) => `${p.kind}:${p.target}`)).toEqual(
      expect.arrayContaining([
        'id:mongodb',
        'id:elasticsearch',
        'text:elasticsearch',
        'text:api',
        'content-hash:mongodb',
        'vector:elasticsearch',
        'locate:mongodb',
        'subject:elasticsearch',
      ]),
    );
    for (const p of certificate.probes) expect(p.found, `${p.kind} probe of ${p.target}`).toBe(0);
    expect(certificate.assurance.find((a) => a.place.includes('postgresql:wal'))).toMatchObject({ level: 'L3' });
    expect(JSON.stringify(certificate)).not.toContain(graph.subject);
    expect(JSON.stringify(certificate)).not.toContain(graph.canary);
    const audit: string[] = [];
    for await (const line of exportAuditJsonl(app.services.audit, graph.tenant)) audit.push(line);
    const verdict = verifyCertificatesJsonl(
      { certificates: `${canonicalJson(certificate)}\n`, audit: audit.join('') },
      { publicKeys: [app.services.publicKeyPem] },
    );
    expect(verdict).toMatchObject({ ok: true, count: 1 });
  });

  it('e-mails the DPO on completion with the certificate id', async () => {
    const certificateId = (await app.services.certificates.byRequest(graph.tenant, requestId))[0]!.certificateId;
    const mail = await waitForMessage(
      stack.smtp.captureDir,
      (m) => m.subject.includes(requestId) && m.subject.includes('completed'),
    );
    expect(mail.text).toContain(certificateId);
    expect(mail.text).not.toContain(graph.subject);
  });

  it('refuses to ingest the erased events again or to derive from an erased parent', async () => {
    const write = async (roles: Role[], url: string, payload: object) =>
      app.request({
        method: 'POST',
        url: `/v1/tenants/${graph.tenant}/${url}`,
        token: await app.token(graph.tenant, roles),
        payload,
      });
    const erasedEvent = sampleEvent({
      subjects: [graph.subject],
      content: `Ana told support her codeword is ${graph.canary} and she lives in Porto.`,
    });
    const fromErased = sampleMemory({
      provenance: { eventIds: [], parentIds: [graph.memories[0]!], derivationRule: 'summarise' },
    });
    const fromNothing = sampleMemory({
      provenance: { eventIds: [], parentIds: ['mem_never_existed'], derivationRule: 'summarise' },
    });
    // A caller with erasure rights is told why.
    const again = await write(['admin'], 'events', erasedEvent);
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json<{ error: { code: string } }>().error.code).toBe('Tombstoned');
    const derived = await write(['admin'], 'memories', fromErased);
    expect(derived.statusCode, derived.body).toBe(409);
    expect(derived.json<{ error: { code: string } }>().error.code).toBe('Tombstoned');
    // An agent is refused just the same, but learns nothing of the erasure: the citation of an erased record
    // reads exactly as the citation of one that never existed.
    const agentAgain = await write(['agent'], 'events', erasedEvent);
    expect(agentAgain.statusCode, agentAgain.body).toBe(409);
    expect(agentAgain.json()).toEqual({
      error: {
        code: 'Conflict',
        field: 'events.0',
        message: "events.0: not admitted now; submit it again later, or ask the tenant's DPO why it was refused",
      },
    });
    const agentDerived = await write(['agent'], 'memories', fromErased);
    const agentFromNothing = await write(['agent'], 'memories', fromNothing);
    expect(agentDerived.statusCode, agentDerived.body).toBe(422);
    expect(agentDerived.body).toBe(agentFromNothing.body);
    expect(`${agentAgain.body}${agentDerived.body}`).not.toMatch(/eras|tombston|subject/i);
  });
});
