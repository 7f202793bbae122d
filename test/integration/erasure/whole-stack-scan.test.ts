/**
 * The records about an erasure and its holds never put the subject's id on disk in the clear for longer than the
 * erasure runs: a subject hold is stored with a keyed hash of the subject from its placement, the request with
 * its selector's keyed hash, and the clear selector the steps need lives apart, deleted and compacted when the
 * request completes. Read as raw PostgreSQL files (dead row versions included), none of these tables names the
 * subject once the erasures' compactions have run.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdSubjectHash } from '../../../src/governance/holds/hold-store.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { storageBackendOf } from '../../../src/substrate/mongo/compaction.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { filesContaining, tableFilesOf, transactionsOlderThanEnded } from '../../support/postgres-table-files.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

const SCANNED = [Collections.erasureSelectors, Collections.erasures, Collections.holds];

describe('table files of erasure requests and legal holds', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('after a subject hold, its release and the erasure, no table file names the subject', async (context) => {
    // The scan reads PostgreSQL's files: on MongoDB (the compose stack) there are none to read.
    if ((await storageBackendOf(app.runtime.db)) !== 'postgresql') context.skip();
    const tenant = uniqueTenant();
    const uuid = randomUUID();
    const subject = `subject-${uuid}`;
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent']),
      payload: { events: [sampleEvent({ subjects: [subject] })], memories: [sampleMemory({ subjects: [subject] })] },
    });
    expect(written.statusCode, written.body).toBe(201);
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
    const request = await waitForState(app, tenant, requestId, ['completed', 'needs-operator']);
    expect(request.state).toBe('completed');
    // The clear selector was deleted and its table compacted when the request certified; a transaction then open
    // elsewhere keeps a deleted row through a compaction, so the scan follows the next erasure's compaction after
    // those transactions ended.
    await transactionsOlderThanEnded(new Date());
    const next = await fileErasure(app, tenant, { subjectId: `subject-${randomUUID()}` });
    expect((await waitForState(app, tenant, next, ['completed', 'needs-operator'])).state).toBe('completed');

    const files = await tableFilesOf(app.runtime.config.mongo.dbName, SCANNED);
    expect(files.get(Collections.erasures)!.length).toBeGreaterThan(0);
    expect(files.get(Collections.holds)!.length).toBeGreaterThan(0);
    const found = Object.fromEntries(
      SCANNED.map((collection) => [collection, filesContaining(files.get(collection)!, uuid).length]),
    );
    expect(found).toEqual({ [Collections.erasures]: 0, [Collections.holds]: 0, [Collections.erasureSelectors]: 0 });

    // The certificate names the three collections as compacted.
    const certificate = await app.services.certificates.get(tenant, request.certificateIds.at(-1)!);
    const stores = certificate!.stores.filter(
      (s) => s.store === 'mongodb' && (SCANNED as readonly string[]).includes(s.collection),
    );
    expect(stores).toEqual(
      SCANNED.map((collection) => expect.objectContaining({ store: 'mongodb', collection, compacted: true })),
    );
  }, 600_000);
});
