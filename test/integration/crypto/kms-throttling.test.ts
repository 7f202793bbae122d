/**
 * The KMS that holds the KEKs is there but throttles: it answers `ThrottlingException` (HTTP 400), as AWS KMS does to
 * a caller over its request quota. The stack's KMS (an emulator of AWS KMS's API, shared with other test files) is
 * reached through a proxy of this file's own that answers for it, so the KMS itself is never touched.
 *
 * The SDK retries a throttled call on its own, up to its attempts per call: a short burst of throttling is absorbed
 * and the caller never sees it. Throttling that outlasts those attempts is the KMS being unavailable: a write or a
 * cold read is refused as 503 naming the key service, and nothing is stored; the same call goes through once the
 * throttling ends.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { testConfig } from '../../support/harness.js';
import { sampleEvent } from '../../support/samples.js';
import { startThrottleProxy, type SeenRequest, type ThrottleProxy } from '../../support/kms-throttle-proxy.js';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';

/** The SDK's attempts per KMS call as the adapter configures them (`maxAttempts` in aws-kms-keks.ts). */
const SDK_ATTEMPTS = 3;

/** What a refusal must never carry: a stack frame or a source path. */
const STACK_TRACE = /\n\s+at |\.ts:\d+|node_modules/;

interface ErrorBody {
  error: { code: string; field?: string; message: string };
}

describe('a KMS that throttles', () => {
  let proxy: ThrottleProxy;
  let app: TestApp;
  let tenant: string;
  const uri = new URL(testConfig().mongo.uri);
  uri.pathname = `/lethe_kms_throttling_${randomUUID().slice(0, 8)}`;
  const kmsConfig = (aliasPrefix: string) => ({
    MONGODB_URI: uri.toString(),
    LETHE_KMS: 'aws-kms',
    LETHE_AWS_KMS_REGION: 'eu-west-1',
    LETHE_AWS_KMS_ENDPOINT: proxy.url,
    LETHE_AWS_KMS_ALIAS_PREFIX: aliasPrefix,
  });

  const write = async (content: string, externalId: string) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/events`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
      payload: sampleEvent({ externalId, content }),
    });
  const read = async (on: TestApp, id: string) =>
    on.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/events/${id}`,
      token: await on.token(tenant, ['agent'], 'agent-1'),
    });
  const storedWith = (externalId: string) =>
    app.runtime.db.collection(Collections.events).countDocuments({ tenant, externalId });
  const keysStored = () => app.runtime.db.collection(Collections.dataKeys).countDocuments({ tenant });
  /** The requests the proxy received from `from` on. */
  const since = (from: number): readonly SeenRequest[] => proxy.requests.slice(from);

  beforeAll(async () => {
    proxy = await startThrottleProxy(new URL(loadStackConfig().kms.url));
    app = await startTestApp({ config: kmsConfig(`alias/lethe-throttling-${randomUUID().slice(0, 8)}`) });
    tenant = uniqueTenant();
    // The first write makes the first KEK epoch: each test then meets a deployment that is already running.
    const first = await write('Bea opened an account.', `ext-${randomUUID()}`);
    expect(first.statusCode, first.body).toBe(201);
  }, 240_000);
  afterAll(async () => {
    proxy?.mode('pass');
    await app?.runtime.db.dropDatabase().catch(() => undefined);
    await app?.close();
    await proxy?.close();
  });

  it('absorbs a burst of throttling shorter than the SDK attempts: the write goes through and reads back', async () => {
    const externalId = `ext-${randomUUID()}`;
    const content = `Bea asked to move her delivery to depot ${randomUUID().slice(0, 6)}.`;
    const from = proxy.seen;
    const throttledBefore = proxy.throttled;
    // One fewer than the attempts of a single call: even if both land on the same call, its last attempt passes.
    proxy.mode('throttle-first', SDK_ATTEMPTS - 1);
    const accepted = await write(content, externalId);
    proxy.mode('pass');
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(proxy.throttled - throttledBefore).toBe(SDK_ATTEMPTS - 1);
    const seen = since(from);
    expect(seen.filter((r) => r.throttled)).toHaveLength(SDK_ATTEMPTS - 1);
    // The throttled calls were retried by the SDK, and a retry got through: the caller never saw the throttling.
    expect(seen.some((r) => !r.throttled && r.attempt >= 2)).toBe(true);
    expect(await storedWith(externalId)).toBe(1);

    const id = accepted.json<{ id: string }>().id;
    const back = await read(app, id);
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json<{ content: string }>().content).toBe(content);
  }, 60_000);

  it('refuses a write as 503 naming the key service while throttling outlasts the SDK attempts, stores nothing, and takes the same write once it ends', async () => {
    const externalId = `ext-${randomUUID()}`;
    const content = `Bea asked for a refund on order ${randomUUID().slice(0, 6)}.`;
    const keysBefore = await keysStored();
    const from = proxy.seen;
    proxy.mode('throttle');
    let refused;
    try {
      refused = await write(content, externalId);
    } finally {
      proxy.mode('pass');
    }
    const seen = since(from);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => r.throttled)).toBe(true);
    // The SDK gave up after its own attempts, not before and not after.
    expect(Math.max(...seen.map((r) => r.attempt))).toBe(SDK_ATTEMPTS);
    expect(seen.every((r) => r.maxAttempts === SDK_ATTEMPTS)).toBe(true);

    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    const error = refused.json<ErrorBody>().error;
    expect(error).toMatchObject({ code: 'Unavailable', field: 'kms' });
    // Named by the KMS's own error name: the SDK read the answer as throttling, not as a refusal of the request.
    expect(error.message).toMatch(/key service \(aws-kms\) is unavailable \(ThrottlingException\)/);
    expect(refused.body).not.toMatch(STACK_TRACE);
    expect(refused.body).not.toContain('Bea');
    expect(refused.body).not.toContain('refund');
    expect(await storedWith(externalId)).toBe(0);
    expect(await keysStored()).toBe(keysBefore);

    const accepted = await write(content, externalId);
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(await storedWith(externalId)).toBe(1);
    const back = await read(app, accepted.json<{ id: string }>().id);
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json<{ content: string }>().content).toBe(content);
  }, 60_000);

  it('refuses as 503 naming the key service a write throttled after it was staged, once the worker’s retries are spent', async () => {
    const externalId = `ext-${randomUUID()}`;
    const content = `Bea asked to close her savings account ${randomUUID().slice(0, 6)}.`;
    // The API seals the batch into its stage; the throttling starts as soon as that is stored, so it meets the
    // worker's admission, which retries it (the store-write profile) until its attempts are spent.
    const staging = app.services.staging;
    const put = staging.put.bind(staging);
    staging.put = async (stage) => {
      await put(stage);
      proxy.mode('throttle');
    };
    const throttledBefore = proxy.throttled;
    let refused;
    try {
      refused = await write(content, externalId);
    } finally {
      staging.put = put;
      proxy.mode('pass');
    }
    expect(proxy.throttled - throttledBefore).toBeGreaterThan(SDK_ATTEMPTS);
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json<ErrorBody>().error).toMatchObject({ code: 'Unavailable', field: 'kms' });
    expect(refused.body).not.toMatch(STACK_TRACE);
    expect(refused.body).not.toContain('savings');
    expect(await storedWith(externalId)).toBe(0);

    const accepted = await write(content, externalId);
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(await storedWith(externalId)).toBe(1);
  }, 180_000);

  it('refuses a cold read as 503 without content or ciphertext while throttled, and serves it once throttling ends', async () => {
    const content = `Bea prefers the Porto office ${randomUUID().slice(0, 6)}.`;
    const written = await write(content, `ext-${randomUUID()}`);
    expect(written.statusCode, written.body).toBe(201);
    const id = written.json<{ id: string }>().id;
    // A second process over the same stores, through the same proxy: it has never unwrapped this record's key.
    const cold = await startTestApp({
      config: kmsConfig((app.runtime.config.sealing.kek as { aliasPrefix: string }).aliasPrefix),
    });
    try {
      const from = proxy.seen;
      proxy.mode('throttle');
      let refused;
      try {
        refused = await read(cold, id);
      } finally {
        proxy.mode('pass');
      }
      expect(since(from).filter((r) => r.throttled).length).toBeGreaterThan(0);
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      const error = refused.json<ErrorBody>().error;
      expect(error).toMatchObject({ code: 'Unavailable', field: 'kms' });
      expect(error.message).toMatch(/\(ThrottlingException\)/);
      expect(refused.body).not.toMatch(STACK_TRACE);
      expect(refused.body).not.toContain('Porto');
      const row = await app.runtime.db
        .collection<{ _id: string; content: string }>(Collections.events)
        .findOne({ _id: id });
      expect(row?.content).toBeTruthy();
      expect(refused.body).not.toContain(row!.content);

      const back = await read(cold, id);
      expect(back.statusCode, back.body).toBe(200);
      expect(back.json<{ content: string }>().content).toBe(content);
    } finally {
      proxy.mode('pass');
      await cold.close();
    }
  }, 120_000);
});
