/**
 * What a copy of every disk of the local stack holds after a subject's erasure. A subject hold is placed, an
 * erasure filed under it (partial), the hold released (the erasure completes); then every data file is read as
 * raw bytes — PostgreSQL's tables and its WAL, Elasticsearch's data, Temporal's database, every log and every
 * captured mail. The subject's id and a content canary may remain only where the certificate says they may: in
 * a place it lists at L3 (with when that lapses). Before the erasure the same scan finds the subject in the tables
 * and the canary in the index, so a scan that cannot see is caught; the canary is in no PostgreSQL file even then,
 * its content being sealed before it is written.
 *
 * The records about the erasure and its holds are part of this: a subject hold is stored with a keyed hash of the
 * subject from its placement, the request with its selector's keyed hash, and the clear selector the steps need
 * lives apart, deleted and compacted when the request completes.
 *
 * The content canary is stricter: it may be nowhere after the erasure, L3 or not, nor in a pg_dump taken before it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdSubjectHash } from '../../../src/governance/holds/hold-store.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { storageBackendOf } from '../../../src/substrate/mongo/compaction.js';
import type { AssuranceClaim } from '../../../src/governance/certificates/certificate.js';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { grepFiles } from '../../support/data-files.js';
import {
  analyze,
  checkpoint,
  dumpDatabase,
  postgresDataDirectory,
  transactionsOlderThanEnded,
} from '../../support/postgres-cluster.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

/** A place on disk, and the certificate's claim that covers it (none: nothing of the subject may be there). */
interface Place {
  name: string;
  dir: string;
  exclude?: string;
  claim: (claims: readonly AssuranceClaim[]) => AssuranceClaim | undefined;
}

function placesOf(pgData: string, stateDir: string, mailDir: string): Place[] {
  const postgresTables = (c: AssuranceClaim) =>
    c.place.startsWith('postgresql:') && c.place !== 'postgresql:wal' && c.place !== 'postgresql:erasure_probes';
  return [
    { name: 'postgresql tables', dir: pgData, exclude: 'pg_wal', claim: (cs) => cs.find(postgresTables) },
    {
      name: 'postgresql wal',
      dir: path.join(pgData, 'pg_wal'),
      claim: (cs) => cs.find((c) => c.place === 'postgresql:wal'),
    },
    {
      name: 'elasticsearch data',
      dir: path.join(stateDir, 'elasticsearch', 'data'),
      claim: (cs) => cs.find((c) => c.place.startsWith('elasticsearch:')),
    },
    {
      name: 'temporal database',
      dir: path.join(stateDir, 'temporal'),
      claim: (cs) => cs.find((c) => c.place === 'temporal:history'),
    },
    { name: 'logs', dir: path.join(stateDir, 'logs'), claim: () => undefined },
    { name: 'captured mail', dir: mailDir, claim: () => undefined },
  ];
}

/** Pages still only in the servers' memory are written out, so the files are what a disk image would hold. */
async function flushEverything(app: TestApp): Promise<void> {
  await app.runtime.es.indices.flush({ index: '_all', force: true, wait_if_ongoing: true });
  await checkpoint();
}

describe('a scan of every data file of the stack after a subject hold, its release and the erasure', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('finds the subject id and the content canary only where the certificate lists L3', async (context) => {
    // The scan reads PostgreSQL's files: on MongoDB (the compose stack) there are none to read.
    if ((await storageBackendOf(app.runtime.db)) !== 'postgresql') context.skip();
    const stack = loadStackConfig();
    const pgData = await postgresDataDirectory();
    const places = placesOf(pgData, stack.stateDir, stack.smtp.captureDir);
    const tenant = uniqueTenant();
    const uuid = randomUUID().replaceAll('-', '');
    const subject = `subject-${uuid}`;
    // One lowercase word: the index stores and tokenizes it as these same bytes.
    const canary = `zcanary${randomUUID().replaceAll('-', '')}`;
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent']),
      payload: {
        events: [
          sampleEvent({ subjects: [subject], content: `Customer prefers e-mail contact, reference ${canary}.` }),
        ],
        memories: [sampleMemory({ subjects: [subject], content: `Prefers e-mail contact, reference ${canary}.` })],
      },
    });
    expect(written.statusCode, written.body).toBe(201);

    // Positive control: the scan sees both in the tables and in the index before the erasure. ANALYZE samples
    // the tables now, as autovacuum may at any moment: a value it copies into the planner's statistics is a
    // copy the erasure's compaction of the tables does not reach.
    await analyze();
    await flushEverything(app);
    const before = (needle: string, name: string) => {
      const place = places.find((p) => p.name === name)!;
      return grepFiles(place.dir, needle, { exclude: place.exclude });
    };
    // Content is sealed before it leaves the process: the tables never hold the canary in clear, even before the
    // erasure; the subject id, kept in clear for queries, shows that the scan reads them.
    expect(before(canary, 'postgresql tables'), 'canary in the tables before').toEqual([]);
    expect(before(canary, 'postgresql wal'), 'canary in the WAL before').toEqual([]);
    expect(before(uuid, 'postgresql tables').length, 'subject in the tables before').toBeGreaterThan(0);
    expect(before(canary, 'elasticsearch data').length, 'canary in the index before').toBeGreaterThan(0);
    // The operator's logical backup, taken before the erasure: the subject's rows are in it, their content sealed.
    const dump = fs.readFileSync(
      await dumpDatabase(
        app.runtime.config.mongo.dbName,
        path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-scan-dump-')), 'before.sql'),
      ),
      'utf8',
    );
    expect(dump, 'subject in the pg_dump').toContain(uuid);
    expect(dump.includes(canary), 'canary in the pg_dump').toBe(false);

    const legal = await app.token(tenant, ['legal'], 'counsel-1');
    const placed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds`,
      token: legal,
      payload: { scope: { subjectId: subject }, caseRef: 'case-2026-044' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    const holdId = placed.json<{ id: string }>().id;
    const subjectHash = holdSubjectHash(app.services.fingerprints, tenant, subject);
    // The active hold is listed by the subject's keyed hash, and still covers the subject's records.
    const listed = await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/legal-holds`, token: legal });
    expect(listed.json()).toMatchObject({ items: [{ id: holdId, scopeKind: 'subject', subjectHash, active: true }] });
    const requestId = await fileErasure(app, tenant, { subjectId: subject });
    expect((await waitForState(app, tenant, requestId, ['partial', 'completed', 'needs-operator'])).state).toBe(
      'partial',
    );
    const released = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds/${holdId}/release`,
      token: legal,
    });
    expect(released.statusCode, released.body).toBe(200);
    const request = await waitForState(app, tenant, requestId, ['completed', 'needs-operator', 'needs-dpo']);
    expect(request.state).toBe('completed');
    // The request's own compaction ran when it certified; a transaction then open elsewhere keeps a deleted row
    // through a compaction, so the scan follows the next erasure's compaction after those transactions ended.
    await transactionsOlderThanEnded(new Date());
    const next = await fileErasure(app, tenant, { subjectId: `subject-${randomUUID()}` });
    expect((await waitForState(app, tenant, next, ['completed', 'needs-operator'])).state).toBe('completed');

    const certificate = await app.services.certificates.get(tenant, request.certificateIds.at(-1)!);
    expect(certificate!.status).toBe('complete');
    // The records about the erasure and its holds are named as compacted.
    const compacted = [Collections.erasureSelectors, Collections.erasures, Collections.holds];
    expect(
      certificate!.stores.filter((s) => s.store === 'mongodb' && (compacted as string[]).includes(s.collection)),
    ).toEqual(
      compacted.map((collection) => expect.objectContaining({ store: 'mongodb', collection, compacted: true })),
    );

    await flushEverything(app);
    const scan = places.map((place) => ({
      place: place.name,
      level: place.claim(certificate!.assurance)?.level ?? 'none',
      subject: grepFiles(place.dir, uuid, { exclude: place.exclude }),
      canary: grepFiles(place.dir, canary, { exclude: place.exclude }),
    }));
    // Found only where the certificate says it may remain (L3), and the WAL is such a place.
    const outsideL3 = scan.filter((s) => s.level !== 'L3' && s.subject.length + s.canary.length > 0);
    expect(outsideL3, JSON.stringify(scan, null, 1)).toEqual([]);
    expect(scan.find((s) => s.place === 'postgresql wal')!.level).toBe('L3');
    // The content itself is nowhere, not even where L3 allows the subject's id: it was sealed before it reached any
    // PostgreSQL file, and the index's copies were expunged.
    expect(
      scan.filter((s) => s.canary.length > 0),
      JSON.stringify(scan, null, 1),
    ).toEqual([]);
  }, 600_000);
});
