/**
 * The restore drill of `runbooks/restore-backup.md`, on the local stack: backups of a tenant taken before an erasure
 * and at two points inside it are restored after the erasure completed, and `lethe restore reapply-erasures`
 * (the command, with the certificates exported beforehand) erases again from every store the certificate lists,
 * side stores included, and from what the request kept while it ran. A second full stack in a fresh state directory
 * is not used: the tenant's collections and index are wiped and restored in place, which is what the command sees.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState, type SubjectGraph } from '../../support/erasure-fixture.js';
import { cliEnvironment, runLethe } from '../../support/cli-process.js';
import { sampleEvent } from '../../support/samples.js';
import { disputeAbout, leaveStage, signOff } from '../../support/side-records-fixture.js';
import { stepGate } from '../../support/step-gate.js';
import { backUpTenant, restoreTenant, type TenantBackup } from '../../support/tenant-backup.js';
import type { ReapplyReport } from '../../../app/cli/commands/restore.command.js';
import type { DeletionCertificate } from '../../../src/governance/certificates/certificate.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

type BackupPoint =
  'before the erasure' | 'after the closure, before the marking' | 'after the marking, before the purge';

describe('the restore drill: a backup restored after an erasure, then reapply-erasures', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let requestId: string;
  let complete: DeletionCertificate;
  let erased: string[];
  let exportFile: string;
  const backups = new Map<BackupPoint, TenantBackup>();
  let tenant = '';

  const backUp = async () =>
    backUpTenant(app.runtime.db, app.runtime.es, tenant, await app.services.index.indexOf(tenant));

  /** `lethe --json restore reapply-erasures --tenant T --certificates <export>`, as the operator runs it. */
  async function reapplyCommand(): Promise<ReapplyReport> {
    const run = await runLethe(
      ['--json', 'restore', 'reapply-erasures', '--tenant', tenant, '--certificates', exportFile],
      // The command reaches the stores, not the API: no API listens at the URL it is given.
      { env: cliEnvironment(app, 'http://127.0.0.1:9'), timeoutMs: 240_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as ReapplyReport;
  }

  /**
   * The MongoDB collections the certificate names (its stores, and the collections of its physical-deletion claim),
   * with the request's own row and the tenant's holds (the selector and a hold's subject are what they keep).
   */
  function listedCollections(): string[] {
    const stores = complete.stores.flatMap((s) => (s.store === 'mongodb' ? [s.collection] : []));
    const compacted = complete.assurance
      .filter((a) => /^(postgresql|mongodb):[a-z_,]+$/.test(a.place) && !a.place.endsWith(':wal'))
      .flatMap((a) => a.place.split(':')[1]!.split(','));
    return [...new Set([...stores, ...compacted, Collections.erasures, Collections.holds])].sort();
  }

  /** What each listed store still holds of the erasure: erased ids, the canary, the clear subject id. */
  async function residues(): Promise<Record<string, string[]>> {
    const markers = (text: string) => [
      ...erased.filter((id) => text.includes(id)),
      ...(text.includes(graph.canary) ? ['canary'] : []),
      ...(text.includes(`"${graph.subject}"`) ? ['subject'] : []),
    ];
    const found: Record<string, string[]> = {};
    for (const name of listedCollections()) {
      const hits = markers(JSON.stringify(await app.runtime.db.collection(name).find({ tenant }).toArray()));
      if (hits.length > 0) found[name] = hits;
    }
    const indexName = complete.stores.find((s) => s.store === 'elasticsearch')!.index!;
    const documents = await app.runtime.es.search({ index: indexName, size: 1000, query: { match_all: {} } });
    const hits = markers(JSON.stringify(documents.hits.hits.map((h) => ({ _id: h._id, _source: h._source }))));
    if (hits.length > 0) found[`elasticsearch:${indexName}`] = hits;
    return found;
  }

  /** Collections of the tenant that hold the canary at all, listed by the certificate or not. */
  async function canaryAnywhere(): Promise<string[]> {
    const holding: string[] = [];
    for (const name of Object.values(Collections)) {
      const docs = await app.runtime.db.collection(name).find({ tenant }).toArray();
      if (JSON.stringify(docs).includes(graph.canary)) holding.push(name);
    }
    return holding;
  }

  /** Side records about the subject, each with the canary: a sign-off reason, a dispute reason, a staged batch. */
  async function sideRecordsAboutTheSubject() {
    await signOff(app, tenant, graph.subject, `Approved: the payslip for ${graph.canary} shows it.`);
    const { disputeId } = await disputeAbout(app, tenant, graph.subject);
    // Words kept for a resolution that never reached its workflow: only the erasure removes them.
    await app.services.disputes.keepReason(tenant, disputeId, 'h', `HR confirmed it for ${graph.canary}`);
    await leaveStage(app, tenant, {
      events: [sampleEvent({ subjects: [graph.subject], content: `Ana's codeword is ${graph.canary}.` })],
    });
  }

  beforeAll(async () => {
    tenant = uniqueTenant();
    // Backups inside the erasure are taken by the worker itself as the round's step starts: round 1 erases what
    // the subject hold does not cover, so its request row, facts and probes exist there.
    const inside: Partial<Record<string, BackupPoint>> = {
      markDeletedAndTombstone: 'after the closure, before the marking',
      purgeRecords: 'after the marking, before the purge',
    };
    app = await startTestApp({
      activityInterceptors: [
        stepGate(async (activity, input) => {
          const point = inside[activity];
          if (!point || input.tenant !== tenant || input.round !== 1 || backups.has(point)) return;
          backups.set(point, await backUp());
        }),
      ],
    });
    graph = await buildSubjectGraph(app, tenant, `CANARY-${randomUUID()}`);
    await sideRecordsAboutTheSubject();
    // The agent reads the subject's records: exposures name them.
    const searched = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token: await app.token(tenant, ['agent'], graph.writer),
      payload: { query: `codeword ${graph.canary}`, k: 20, intent: 'history' },
    });
    expect(searched.statusCode, searched.body).toBe(200);
    const held = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds`,
      token: await app.token(tenant, ['legal'], 'counsel-1'),
      payload: { scope: { subjectId: graph.subject }, caseRef: 'case-2026-031' },
    });
    expect(held.statusCode, held.body).toBe(201);
    const holdId = held.json<{ id: string }>().id;
    backups.set('before the erasure', await backUp());

    requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    expect((await waitForState(app, tenant, requestId, ['partial', 'completed', 'needs-operator'])).state).toBe(
      'partial',
    );
    const released = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds/${holdId}/release`,
      token: await app.token(tenant, ['legal'], 'counsel-1'),
    });
    expect(released.statusCode, released.body).toBe(200);
    expect((await waitForState(app, tenant, requestId, ['completed', 'needs-operator'])).state).toBe('completed');

    // The auditor's export, kept outside MongoDB: a MongoDB backup from before the erasure has no certificates.
    const certificates: DeletionCertificate[] = [];
    for await (const certificate of app.services.certificates.list(tenant)) certificates.push(certificate);
    expect(certificates.map((c) => c.status)).toEqual(['partial', 'complete']);
    complete = certificates[1]!;
    erased = complete.closure.ids;
    exportFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-drill-')), `certs-${tenant}.jsonl`);
    fs.writeFileSync(exportFile, certificates.map((c) => `${JSON.stringify(c)}\n`).join(''));
    expect(await residues()).toEqual({});
  }, 300_000);

  afterAll(async () => {
    await app?.close();
  });

  it('takes backups that hold what the erasure removed, side stores included', () => {
    expect([...backups.keys()].sort()).toEqual([
      'after the closure, before the marking',
      'after the marking, before the purge',
      'before the erasure',
    ]);
    const count = (point: BackupPoint, name: string) => backups.get(point)!.mongo[name]!.length;
    const text = (point: BackupPoint, name: string) => JSON.stringify(backups.get(point)!.mongo[name]);
    // Staged batches and reviewers' reasons are sealed under data keys of their own: the backup holds them, but not
    // their words in clear.
    for (const name of [Collections.staging, Collections.reviews, Collections.disputeReasons]) {
      expect(count('before the erasure', name), name).toBeGreaterThan(0);
      expect(text('before the erasure', name), name).toContain('lethe-sealed:v2:kp_');
      expect(text('before the erasure', name), name).not.toContain(graph.canary);
    }
    expect(text('before the erasure', Collections.exposures)).toContain(graph.memories[0]);
    // A subject hold keeps only the subject's keyed hash: the backup holds the hold, never the clear subject.
    expect(count('before the erasure', Collections.holds)).toBe(1);
    expect(text('before the erasure', Collections.holds)).not.toContain(graph.subject);
    expect(count('after the closure, before the marking', Collections.erasureFacts)).toBeGreaterThan(0);
    // The clear selector the steps need lives apart from the request row while the request runs.
    expect(text('after the closure, before the marking', Collections.erasureSelectors)).toContain(graph.subject);
    expect(text('after the closure, before the marking', Collections.erasures)).not.toContain(graph.subject);
    expect(count('after the marking, before the purge', Collections.erasureProbes)).toBe(1);
    expect(count('before the erasure', Collections.certificates)).toBe(0);
  });

  it.each<BackupPoint>([
    'before the erasure',
    'after the closure, before the marking',
    'after the marking, before the purge',
  ])(
    'restored from a backup taken %s, every store the certificate lists is erased again',
    async (point) => {
      await restoreTenant(app.runtime.db, app.runtime.es, backups.get(point)!);
      expect(Object.keys(await residues()).length).toBeGreaterThan(0);

      const report = await reapplyCommand();
      expect(report).toMatchObject({ tenant, certificates: 2, requests: 1, segmentsDeletedDocs: 0 });
      // A backup older than the marking holds none of its tombstones: the command says so, and writes them again.
      const tombstonesBackedUp = backups.get(point)!.mongo[Collections.tombstones]!.length > 0;
      expect(report.warnings.filter((w) => !w.includes('held no tombstones'))).toEqual([]);
      expect(report.warnings).toHaveLength(tombstonesBackedUp ? 0 : 1);
      expect(await residues()).toEqual({});
      expect(await canaryAnywhere()).toEqual([]);
      expect((await app.services.index.segmentStats(tenant)).deletedDocs).toBe(0);
      const row = await app.services.erasureRequests.get(tenant, requestId);
      if (row)
        expect({ state: row.state, selector: row.selector ?? null }).toEqual({ state: 'completed', selector: null });
      expect(await app.services.erasureRequests.selectorOf(tenant, requestId)).toBeNull();
      expect(await app.services.holds.active(tenant)).toEqual([]);
      expect(await app.runtime.db.collection(Collections.erasureFences).countDocuments({ tenant })).toBe(0);

      // Idempotent: the second run finds nothing and rewrites nothing.
      const again = await reapplyCommand();
      expect(again).toMatchObject({
        restored: { memories: 0, events: 0 },
        purged: { memories: 0, events: 0, lineage: 0, indexDocs: 0 },
        requestRecords: { probes: 0, facts: 0, requests: 0, fences: 0, holds: 0 },
        compacted: [],
      });
      expect(Object.values(again.requestRecords.side).every((n) => n === 0)).toBe(true);
      expect(again.tombstones.written).toBe(0);
    },
    300_000,
  );
});
