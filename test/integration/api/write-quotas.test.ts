import { loadTokenKeys } from '../../../src/governance/auth/token-keys.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer } from '../../../app/api/server.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { sampleEvent } from '../../support/samples.js';

/** Quotas small enough to spend in a test: three records a day, 250 bytes of content stored. */
describe("a tenant's writes are bounded by its daily write quota and its stored-bytes quota", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      config: {
        LETHE_QUOTA_WRITES_PER_DAY: '3',
        LETHE_QUOTA_STORED_BYTES: '250',
        LETHE_HTTP_BODY_LIMIT_BYTES: '4096',
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const ingest = async (tenant: string, content: string, subject = 'subject-1') =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/events`,
      token: await app.token(tenant, ['agent']),
      payload: sampleEvent({ content, subjects: [subject] }),
    });

  it('refuses the write past the daily quota with 429 naming it, counted across API processes', async () => {
    const tenant = uniqueTenant();
    // A second API process over the same database: the count is the database's, not a process's.
    const second = await buildApiServer({
      log: app.runtime.log,
      probes: [],
      services: app.services,
      tokenKeys: loadTokenKeys(app.runtime.config.tokens),
      limits: app.runtime.config.limits,
    });
    try {
      expect((await ingest(tenant, 'First note.')).statusCode).toBe(201);
      expect((await ingest(tenant, 'Second note.')).statusCode).toBe(201);
      const third = await second.inject({
        method: 'POST',
        url: `/v1/tenants/${tenant}/events`,
        headers: { authorization: `Bearer ${await app.token(tenant, ['agent'])}` },
        payload: sampleEvent({ content: 'Third note.' }),
      });
      expect(third.statusCode, third.body).toBe(201);
      const fourth = await ingest(tenant, 'Fourth note.');
      expect(fourth.statusCode, fourth.body).toBe(429);
      expect(fourth.json<{ error: { code: string; message: string } }>().error).toMatchObject({
        code: 'QuotaExceeded',
        message: expect.stringMatching(/3 writes per day/) as unknown,
      });
    } finally {
      await second.close();
    }
  });

  it('refuses a write past the stored-bytes quota with 413, and takes writes again once an erasure freed bytes', async () => {
    const tenant = uniqueTenant();
    const big = (word: string) => `${word} `.repeat(150 / (word.length + 1)).trim();
    expect((await ingest(tenant, big('kept'), 'subject-erased')).statusCode).toBe(201);
    const over = await ingest(tenant, big('over'));
    expect(over.statusCode, over.body).toBe(413);
    expect(over.json<{ error: { code: string; message: string } }>().error).toMatchObject({
      code: 'StorageQuotaExceeded',
      message: expect.stringMatching(/250 bytes of stored content/) as unknown,
    });
    const erasure = await fileErasure(app, tenant, { subjectId: 'subject-erased' });
    expect((await completeErasure(app, tenant, erasure, 'certify')).state).toBe('completed');
    expect(await app.services.usage.value(tenant, 'stored-bytes')).toBe(0);
    expect((await ingest(tenant, big('again'))).statusCode).toBe(201);
  }, 240_000);

  it('refuses a body larger than the configured limit with 413 before reading it whole', async () => {
    const response = await ingest(uniqueTenant(), 'x'.repeat(5000));
    expect(response.statusCode).toBe(413);
    expect(response.json<{ error: { code: string } }>().error.code).toBe('FST_ERR_CTP_BODY_TOO_LARGE');
  });
});
