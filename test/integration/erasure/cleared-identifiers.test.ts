/**
 * Records about an erasure that outlive it keep no clear identifiers or words: a subject hold keeps a keyed hash
 * of the subject from its placement, a deadline extension a keyed hash of its reason, and a request keeps its
 * selector's keyed hash, its clear selector apart until it finishes (or is dropped when it will not run).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdSubjectHash } from '../../../src/governance/holds/hold-store.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

describe('identifiers kept after an erasure', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const raw = (name: string) => app.runtime.db.collection<{ _id: string }>(name);

  async function writeAbout(tenant: string, subject: string) {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent']),
      payload: { events: [sampleEvent({ subjects: [subject] })], memories: [sampleMemory({ subjects: [subject] })] },
    });
    expect(response.statusCode, response.body).toBe(201);
  }

  async function placeSubjectHold(tenant: string, subject: string) {
    const placed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds`,
      token: await app.token(tenant, ['legal'], 'counsel-1'),
      payload: { scope: { subjectId: subject }, caseRef: 'case-2026-031' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    return placed.json<{ id: string }>().id;
  }

  const release = async (tenant: string, holdId: string) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds/${holdId}/release`,
      token: await app.token(tenant, ['legal'], 'counsel-1'),
    });

  it('a subject hold keeps only a keyed hash of the subject, placed and released', async () => {
    const tenant = uniqueTenant();
    const subject = `subject-${randomUUID()}`;
    const holdId = await placeSubjectHold(tenant, subject);
    const subjectHash = holdSubjectHash(app.services.fingerprints, tenant, subject);
    // While the hold is active it covers the records whose subjects hash to it: no version of it names the subject.
    const placed = await raw(Collections.holds).findOne({ _id: holdId });
    expect(placed).toMatchObject({ active: true, scope: { subjectHash } });
    expect(JSON.stringify(placed)).not.toContain(subject);

    const released = await release(tenant, holdId);
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json()).toMatchObject({ id: holdId, active: false, scopeKind: 'subject', subjectHash });
    const hold = await raw(Collections.holds).findOne({ _id: holdId });
    expect(hold).toMatchObject({ active: false, releasedBy: 'counsel-1', scope: { subjectHash } });
    expect(JSON.stringify(hold)).not.toContain(subject);
    // Releasing again changes nothing: 409 naming who released it, and the hold still shows only the hash.
    const again = await release(tenant, holdId);
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json()).toMatchObject({ error: { message: 'legal hold: already released by counsel-1' } });
    expect(again.body).not.toContain(subject);
    expect(await raw(Collections.holds).findOne({ _id: holdId })).toMatchObject({
      active: false,
      scope: { subjectHash },
    });
  });

  it('a deadline extension keeps only a keyed hash of its reason', async () => {
    const tenant = uniqueTenant();
    const subject = `subject-${randomUUID()}`;
    await writeAbout(tenant, subject);
    const holdId = await placeSubjectHold(tenant, subject);
    // The erasure waits on the hold, so its deadline can still be extended.
    const requestId = await fileErasure(app, tenant, { subjectId: subject });
    expect(
      (await waitForState(app, tenant, requestId, ['partial', 'completed', 'needs-operator', 'rejected'])).state,
    ).toBe('partial');
    const reason = `Backlog after the migration, ticket ${randomUUID()}`;
    const extended = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/erasure-requests/${requestId}/extension`,
      token: await app.token(tenant, ['dpo'], 'dpo-1'),
      payload: { months: 1, reason },
    });
    expect(extended.statusCode, extended.body).toBe(200);
    const request = await raw(Collections.erasures).findOne({ _id: requestId });
    expect(request).toMatchObject({
      extensionMonths: 1,
      extensionReasonHash: app.services.fingerprints.of('extension-reason', tenant, reason),
    });
    expect(JSON.stringify(request)).not.toContain(reason);

    // The release frees the erasure, which then finishes.
    expect((await release(tenant, holdId)).statusCode).toBe(200);
    expect((await waitForState(app, tenant, requestId, ['completed', 'needs-operator'])).state).toBe('completed');
  }, 240_000);

  it("a request keeps its clear selector apart, and one that will not run drops it on demand, keeping the selector's keyed hash", async () => {
    const tenant = uniqueTenant();
    const selector = { subjectId: `subject-${randomUUID()}` };
    const selectorHash = app.services.fingerprints.of('erasure-selector', tenant, canonicalJson(selector));
    const requestId = `era_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const at = new Date();
    // As the store holds a request whose workflow failed before it finished: its selector still kept in the clear.
    await app.services.erasureRequests.create({
      _id: requestId,
      tenant,
      selector,
      selectorKind: 'subjectId',
      selectorHash,
      legalGround: 'art17-1a',
      requester: 'dpo-1',
      requesterRoles: ['dpo'],
      receivedAt: at,
      dueAt: new Date(at.getTime() + 30 * 86_400_000),
      extensionMonths: 0,
      extensionReasonHash: null,
      state: 'running',
      steps: [],
      progress: { purged: 0, total: 0 },
      counts: {},
      holdIds: [],
      certificateIds: [],
      operatorNote: null,
      updatedAt: at,
    });
    // The request keeps the keyed hash; the clear selector is kept apart.
    expect(JSON.stringify(await raw(Collections.erasures).findOne({ _id: requestId }))).not.toContain(
      selector.subjectId,
    );
    expect(await raw(Collections.erasureSelectors).findOne({ _id: requestId })).toMatchObject({ tenant, selector });
    expect(await app.services.erasureRequests.selectorOf(tenant, requestId)).toEqual(selector);
    expect(await app.services.erasureRequests.selectorOf(uniqueTenant(), requestId)).toBeNull();

    // Confined to its tenant, and idempotent.
    await app.services.erasureRequests.dropSelector(uniqueTenant(), requestId);
    expect(await app.services.erasureRequests.selectorOf(tenant, requestId)).toEqual(selector);
    await app.services.erasureRequests.dropSelector(tenant, requestId);
    await app.services.erasureRequests.dropSelector(tenant, requestId);

    const request = await raw(Collections.erasures).findOne({ _id: requestId });
    expect(request).toMatchObject({ state: 'running', selectorKind: 'subjectId', selectorHash });
    expect(JSON.stringify(request)).not.toContain(selector.subjectId);
    expect(await raw(Collections.erasureSelectors).findOne({ _id: requestId })).toBeNull();
    expect(await app.services.erasureRequests.selectorOf(tenant, requestId)).toBeNull();
    const shown = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/erasure-requests/${requestId}`,
      token: await app.token(tenant, ['dpo'], 'dpo-1'),
    });
    expect(shown.json()).toMatchObject({ state: 'running', selectorKind: 'subjectId', selectorHash });
  });
});
