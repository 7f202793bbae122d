/**
 * The KMS that holds the KEKs goes away: it refuses connections, or accepts them and never answers. The stack's KMS
 * (an emulator of AWS KMS's API, shared with other test files) is reached here through a proxy of this file's own
 * that injects the fault, so the KMS itself is never stopped. A write needs the KMS (its data key is wrapped there),
 * a cold read needs it (the key is unwrapped there), a rotation needs it; an erasure must not be lost for it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { testConfig } from '../../support/harness.js';
import { sampleEvent } from '../../support/samples.js';
import { startFaultProxy, type FaultProxy } from '../../support/tcp-fault-proxy.js';
import { buildSubjectGraph, completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { rotateKeks } from '../../../src/substrate/crypto/kek-rotation.js';
import { createDataKeyVault } from '../../../src/substrate/crypto/data-key-vault.js';
import { createContentCipher } from '../../../src/substrate/crypto/content-cipher.js';
import type { KeyEncryptionKeys } from '../../../src/substrate/crypto/key-encryption-keys.port.js';
import { erasureWorkflowId } from '../../../src/temporal/erasure-gateway.js';
import { activityAttempts } from '../../support/activity-attempts.js';
import { vaultDocsNaming } from '../../support/vault-refs.js';

process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';

/** One KMS call's wait: short, so that a silent KMS is given up on within seconds here. */
const KMS_TIMEOUT_MS = 600;

describe('a KMS that is down or silent', () => {
  let proxy: FaultProxy;
  let app: TestApp;
  let tenant: string;
  const uri = new URL(testConfig().mongo.uri);
  uri.pathname = `/lethe_kms_outage_${randomUUID().slice(0, 8)}`;

  const write = async (content: string, externalId = `ext-${randomUUID()}`) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/events`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
      payload: sampleEvent({ externalId, content }),
    });
  const storedWith = (externalId: string) =>
    app.runtime.db.collection(Collections.events).countDocuments({ tenant, externalId });

  beforeAll(async () => {
    proxy = await startFaultProxy(new URL(loadStackConfig().kms.url));
    app = await startTestApp({
      config: {
        MONGODB_URI: uri.toString(),
        LETHE_KMS: 'aws-kms',
        LETHE_AWS_KMS_REGION: 'eu-west-1',
        LETHE_AWS_KMS_ENDPOINT: proxy.url,
        LETHE_AWS_KMS_ALIAS_PREFIX: `alias/lethe-outage-${randomUUID().slice(0, 8)}`,
        LETHE_AWS_KMS_TIMEOUT_MS: String(KMS_TIMEOUT_MS),
      },
    });
    tenant = uniqueTenant();
  }, 240_000);
  afterAll(async () => {
    proxy?.mode('pass');
    await app?.runtime.db.dropDatabase().catch(() => undefined);
    await app?.close();
    await proxy?.close();
  });

  it.each(['refuse', 'hang'] as const)(
    'with the KMS set to %s, a write is refused as 503 naming the key service, stores nothing, and goes through once it is back',
    async (fault) => {
      const externalId = `ext-${randomUUID()}`;
      const content = `Ana asked for a call back about order ${randomUUID().slice(0, 6)}.`;
      const keysBefore = await app.runtime.db.collection(Collections.dataKeys).countDocuments({ tenant });
      proxy.mode(fault);
      const refused = await write(content, externalId);
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      const error = refused.json<{ error: { code: string; field: string; message: string } }>().error;
      expect(error).toMatchObject({ code: 'Unavailable', field: 'kms' });
      expect(error.message).toMatch(/key service \(aws-kms\) is unavailable/);
      expect(refused.body).not.toContain('Ana');
      expect(await storedWith(externalId)).toBe(0);
      expect(await app.runtime.db.collection(Collections.dataKeys).countDocuments({ tenant })).toBe(keysBefore);

      proxy.mode('pass');
      const accepted = await write(content, externalId);
      expect(accepted.statusCode, accepted.body).toBe(201);
      expect(await storedWith(externalId)).toBe(1);
    },
    60_000,
  );

  it('keeps serving what a process already holds the key of, and refuses a cold read as 503 without ciphertext', async () => {
    const written = await write('Ana prefers the Lisbon office.');
    expect(written.statusCode, written.body).toBe(201);
    const id = written.json<{ id: string }>().id;
    const read = async (on: TestApp) =>
      on.request({
        method: 'GET',
        url: `/v1/tenants/${tenant}/events/${id}`,
        token: await on.token(tenant, ['agent'], 'agent-1'),
      });
    // A second process over the same stores, through the same proxy: it has never unwrapped this key.
    const cold = await startTestApp({
      config: {
        MONGODB_URI: uri.toString(),
        LETHE_KMS: 'aws-kms',
        LETHE_AWS_KMS_REGION: 'eu-west-1',
        LETHE_AWS_KMS_ENDPOINT: proxy.url,
        LETHE_AWS_KMS_ALIAS_PREFIX: (app.runtime.config.sealing.kek as { aliasPrefix: string }).aliasPrefix,
        LETHE_AWS_KMS_TIMEOUT_MS: String(KMS_TIMEOUT_MS),
      },
    });
    try {
      proxy.mode('refuse');
      const warm = await read(app);
      expect(warm.statusCode, warm.body).toBe(200);
      expect(warm.json<{ content: string }>().content).toBe('Ana prefers the Lisbon office.');
      const refused = await read(cold);
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.json<{ error: { code: string } }>().error.code).toBe('Unavailable');
      expect(refused.body).not.toContain('Lisbon');
      const row = await app.runtime.db
        .collection<{ _id: string; content: string }>(Collections.events)
        .findOne({ _id: id });
      expect(refused.body).not.toContain(row!.content);
      proxy.mode('pass');
      const back = await read(cold);
      expect(back.statusCode, back.body).toBe(200);
      expect(back.json<{ content: string }>().content).toBe('Ana prefers the Lisbon office.');
    } finally {
      proxy.mode('pass');
      await cold.close();
    }
  }, 120_000);

  it('refuses a KEK rotation while the KMS is down, and begins or destroys no epoch', async () => {
    const keks = app.runtime.cipher.vault.keks;
    const before = await keks.epochs();
    proxy.mode('refuse');
    try {
      await expect(rotateKeks(app.runtime.cipher.vault, keks, { settleMs: 0 })).rejects.toMatchObject({
        type: 'Unavailable',
      });
    } finally {
      proxy.mode('pass');
    }
    expect(await keks.epochs()).toEqual(before);
  }, 60_000);

  it('lets an erasure filed while the KMS is down wait for it, and complete with a certificate once it is back', async () => {
    const subjectTenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, subjectTenant, `CANARY-${randomUUID()}`);
    proxy.mode('refuse');
    let requestId: string;
    try {
      requestId = await fileErasure(app, subjectTenant, { subjectId: graph.subject });
      const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(subjectTenant, requestId));
      // Until the step that reads sealed content has met the outage on several attempts: none of them ends the
      // request. (Bounded by the attempts seen, not by a guess at how long they take here.)
      const deadline = Date.now() + 120_000;
      while ((await activityAttempts(handle, 'markDeletedAndTombstone')).retried < 2) {
        if (Date.now() > deadline) throw new Error('the marking step never met the outage within 120 s');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const during = await app.services.erasureRequests.get(subjectTenant, requestId);
      expect(['received', 'running']).toContain(during!.state);
    } finally {
      proxy.mode('pass');
    }
    // The outage reached the erasure: a step that reads sealed content failed on it and was retried, not given up.
    const handle = app.services.temporalClient.workflow.getHandle(erasureWorkflowId(subjectTenant, requestId!));
    const tombstoning = await activityAttempts(handle, 'markDeletedAndTombstone');
    expect(tombstoning.retried).toBeGreaterThan(0);
    expect(tombstoning.failed).toBe(0);
    expect(tombstoning.failures.join('\n')).toMatch(/key service \(aws-kms\) is unavailable/);
    const settled = await completeErasure(app, subjectTenant, requestId!, 'extend');
    expect(settled.state).toBe('completed');
    expect(settled.certificateIds.length).toBeGreaterThan(0);
    const erased = [...graph.events, ...graph.memories];
    expect(await app.runtime.cipher.vault.idsWithKeys(subjectTenant, erased)).toEqual([]);
    expect(await vaultDocsNaming(app.runtime.db, subjectTenant, erased)).toEqual([]);
  }, 240_000);

  it('fails a rotation whose KMS goes away mid re-wrap with no epoch destroyed, every record still opening, and the next rotation finishing the job', async () => {
    const keks = app.runtime.cipher.vault.keks;
    const rotTenant = uniqueTenant();
    const contents = Array.from(
      { length: 40 },
      (_, i) => `Rotation note ${i} about depot ${randomUUID().slice(0, 6)}.`,
    );
    // One write each, so one page each. A page is re-wrapped whole or not at all, and a rotation re-wraps at most 16
    // pages at once: a fault after 15 wraps leaves pages under both epochs. (In one page of 40, the fault could
    // strike after all 40 wraps were answered, and the page move whole.)
    const token = await app.token(rotTenant, ['agent'], 'agent-1');
    const written = new Map<string, string>();
    for (const content of contents) {
      const response = await app.request({
        method: 'POST',
        url: `/v1/tenants/${rotTenant}/events`,
        token,
        payload: sampleEvent({ content }),
      });
      expect(response.statusCode, response.body).toBe(201);
      written.set(response.json<{ id: string }>().id, content);
    }
    const ids = [...written.keys()];
    /** The records' content as a process that has never unwrapped their keys opens it. */
    const openedCold = async () => {
      const vault = createDataKeyVault(app.runtime.db, keks);
      try {
        const rows = await app.runtime.db
          .collection<{ _id: string; tenant: string; content: string }>(Collections.events)
          .find({ tenant: rotTenant })
          .toArray();
        const opened = await createContentCipher(vault).openAll(rows);
        return new Map(opened.map((r) => [r._id, r.content]));
      } finally {
        vault.close();
      }
    };
    const before = await keks.epochs();
    const destroyedBefore = before.filter((e) => e.destroyedAt !== null).map((e) => e.epoch);

    // The KMS goes away after the rotation has begun its epoch and re-wrapped some keys: once 15 wraps are answered.
    let wraps = 0;
    let faulted = false;
    /** Every KMS call of the rotation: whether it began after the fault, and how it ended. */
    const calls: { afterFault: boolean; ended: Promise<'answered' | 'refused'> }[] = [];
    const tracked = <T>(call: Promise<T>): Promise<T> => {
      calls.push({
        afterFault: faulted,
        ended: call.then(
          () => 'answered' as const,
          () => 'refused' as const,
        ),
      });
      return call;
    };
    const failing: KeyEncryptionKeys = {
      kind: keks.kind,
      wrap: (key, context) =>
        tracked(
          keks.wrap(key, context).then((wrapped) => {
            if (++wraps === 15) {
              proxy.mode('refuse');
              faulted = true;
            }
            return wrapped;
          }),
        ),
      unwrap: (epoch, wrapped, context) => tracked(keks.unwrap(epoch, wrapped, context)),
      epochs: () => tracked(keks.epochs()),
      beginEpoch: () => tracked(keks.beginEpoch()),
      destroyEpoch: (epoch) => tracked(keks.destroyEpoch(epoch)),
    };
    const rotator = createDataKeyVault(app.runtime.db, failing);
    try {
      await expect(rotateKeks(rotator, failing, { settleMs: 0 })).rejects.toMatchObject({ type: 'Unavailable' });
      // The re-wraps under way when the first failed meet the outage too before the KMS is back: every KMS call the
      // rotation made has ended, with none begun since (a page's next call begins as its last one ends), and each
      // one begun after the fault was refused.
      for (let seen = -1; seen !== calls.length;) {
        seen = calls.length;
        await Promise.all(calls.map((c) => c.ended));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const afterFault = await Promise.all(calls.filter((c) => c.afterFault).map((c) => c.ended));
      expect(afterFault.length).toBeGreaterThan(0);
      expect(afterFault.filter((ended) => ended === 'answered')).toEqual([]);
    } finally {
      proxy.mode('pass');
      rotator.close();
    }
    const midway = await keks.epochs();
    expect(midway).toHaveLength(before.length + 1);
    expect(midway.filter((e) => e.destroyedAt !== null).map((e) => e.epoch)).toEqual(destroyedBefore);
    const begun = midway[midway.length - 1]!.epoch;
    const previous = before[before.length - 1]!.epoch;
    // The fault struck mid re-wrap: keys under both the new epoch and the one before it.
    expect(await app.runtime.cipher.vault.countUnder(begun)).toBeGreaterThan(0);
    expect(await app.runtime.cipher.vault.countUnder(previous)).toBeGreaterThan(0);
    expect(await openedCold()).toEqual(written);

    const outcome = await rotateKeks(app.runtime.cipher.vault, keks, { settleMs: 0 });
    expect(outcome.kept).toEqual([]);
    expect(outcome.destroyed).toEqual(expect.arrayContaining([previous, begun]));
    const after = await keks.epochs();
    expect(after.filter((e) => e.destroyedAt === null).map((e) => e.epoch)).toEqual([outcome.epoch]);
    expect(await app.runtime.cipher.vault.countUnder(outcome.epoch)).toBeGreaterThanOrEqual(ids.length);
    expect(await openedCold()).toEqual(written);
  }, 240_000);
});
