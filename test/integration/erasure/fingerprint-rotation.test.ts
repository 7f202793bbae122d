/**
 * Rotating the fingerprint key: tombstones, fences and subject holds written under the old key keep working after a
 * new key becomes current, for as long as the old key stays listed (LETHE_FINGERPRINT_KEYS, the first current).
 * Dropping it is what would make erased content admissible again, which the last case shows.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { completeErasure, fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent } from '../../support/samples.js';
import type { Role } from '../../../src/governance/auth/principal.js';
import { createFingerprinter } from '../../../src/substrate/fingerprint.js';
import { createMongoErasureFenceStore } from '../../../src/governance/erasure/erasure-fence-store.js';

describe('rotating the fingerprint key: what was keyed under the old key still holds while it stays listed', () => {
  const tenant = uniqueTenant();
  const erased = { subject: `subj-${randomUUID().slice(0, 8)}`, content: `Erased note ${randomUUID()}` };
  const fenced = `subj-${randomUUID().slice(0, 8)}`;
  const held = `subj-${randomUUID().slice(0, 8)}`;
  const fenceRequest = `era_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
  const newKey = { id: 'k-new', secret: randomBytes(32).toString('base64url') };
  /** After the rotation: the new key current, the old one still listed. */
  let rotated: TestApp;
  let oldKeys: string;

  const write = async (app: TestApp, url: string, payload: object, roles: Role[] = ['admin']) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/${url}`,
      token: await app.token(tenant, roles),
      payload,
    });

  beforeAll(async () => {
    // Under the old key: a subject erased (tombstones), a fence raised, a subject hold placed.
    const before = await startTestApp();
    try {
      oldKeys = before.runtime.config.secrets.fingerprintKeys.map((k) => `${k.id}:${k.secret}`).join(',');
      const written = await write(
        before,
        'events',
        sampleEvent({ subjects: [erased.subject], content: erased.content }),
      );
      expect(written.statusCode, written.body).toBe(201);
      const requestId = await fileErasure(before, tenant, { subjectId: erased.subject });
      expect((await completeErasure(before, tenant, requestId, 'extend')).state).toBe('completed');
      await before.services.fences.raise(tenant, fenceRequest, [{ kind: 'subject', value: fenced }]);
      const heldEvent = await write(
        before,
        'events',
        sampleEvent({ subjects: [held], content: `Held ${randomUUID()}` }),
      );
      expect(heldEvent.statusCode, heldEvent.body).toBe(201);
      const hold = await write(before, 'legal-holds', { scope: { subjectId: held }, caseRef: 'case-rotation' }, [
        'legal',
      ]);
      expect(hold.statusCode, hold.body).toBe(201);
    } finally {
      await before.close();
    }
    rotated = await startTestApp({ config: { LETHE_FINGERPRINT_KEYS: `${newKey.id}:${newKey.secret},${oldKeys}` } });
  }, 300_000);

  afterAll(async () => {
    await rotated?.services.fences.lower(tenant, fenceRequest);
    await rotated?.close();
  });

  it('new hashes are made under the new key', () => {
    expect(rotated.services.fingerprints.keyId).toBe(newKey.id);
    expect(rotated.services.fingerprints.all('x')).toHaveLength(2);
  });

  it('re-ingesting the erased content is still refused', async () => {
    const again = await write(rotated, 'events', sampleEvent({ subjects: [erased.subject], content: erased.content }));
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json<{ error: { code: string } }>().error.code).toBe('Tombstoned');
    // Positive control: the same subject with content never erased is admitted.
    const other = await write(
      rotated,
      'events',
      sampleEvent({ subjects: [erased.subject], content: `New ${randomUUID()}` }),
    );
    expect(other.statusCode, other.body).toBe(201);
  });

  it('a fence raised under the old key still blocks writes about its subject', async () => {
    const blocked = await write(rotated, 'events', sampleEvent({ subjects: [fenced] }));
    expect(blocked.statusCode, blocked.body).toBe(409);
    expect(blocked.body).toContain(fenceRequest);
  });

  it('a subject hold placed under the old key still covers its subject: the erasure stops at partial', async () => {
    const requestId = await fileErasure(rotated, tenant, { subjectId: held });
    const settled = await waitForState(rotated, tenant, requestId, [
      'partial',
      'completed',
      'needs-operator',
      'rejected',
    ]);
    expect(settled.state).toBe('partial');
  }, 180_000);

  it('with the old key dropped, the same fence no longer matches: why a key stays listed while its hashes must', async () => {
    const newOnly = createMongoErasureFenceStore(rotated.runtime.db, createFingerprinter([newKey]));
    expect(await newOnly.firstFenced(tenant, [{ kind: 'subject', value: fenced }])).toBeNull();
    expect(await rotated.services.fences.firstFenced(tenant, [{ kind: 'subject', value: fenced }])).toMatchObject({
      requestId: fenceRequest,
    });
  });
});
