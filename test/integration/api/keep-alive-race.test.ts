import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../app/cli/api-client.js';
import { startApiOverSockets, type ApiOverSockets } from '../../support/api-over-sockets.js';
import { startClosingProxy, type ClosingProxy } from '../../support/closing-proxy.js';
import { uniqueTenant } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

/** Every fetch the test's process sends, with its idempotency key and how it ended; each request goes through. */
function recordFetches() {
  const sent: { key: string | null; failure: string | null }[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const key = new Headers(init?.headers).get('idempotency-key');
    try {
      const response = await original(input, init);
      sent.push({ key, failure: null });
      return response;
    } catch (error) {
      sent.push({ key, failure: (error as { cause?: { code?: string } }).cause?.code ?? String(error) });
      throw error;
    }
  };
  return { sent, restore: () => void (globalThis.fetch = original) };
}

/** A connection closed under a request: what a client busy past the keep-alive meets when it then writes at once. */
const CLOSED_UNDER_REQUEST = ['UND_ERR_SOCKET', 'ECONNRESET'];

/**
 * The race itself is timing (the client sends on a socket the server closed while the client was busy, and no answer
 * comes); a proxy plays it on demand so that every run meets it.
 */
describe('a write whose kept-alive connection closes under it, before any answer', () => {
  let stack: ApiOverSockets;
  let proxy: ClosingProxy;
  beforeAll(async () => {
    stack = await startApiOverSockets();
    proxy = await startClosingProxy(new URL(stack.api.url));
  }, 180_000);
  afterAll(async () => {
    await proxy?.close();
    await stack?.close();
  });

  it('through the CLI client, lands once: the resend after the closed connection carries the same key', async () => {
    const tenant = uniqueTenant();
    const client = createApiClient(proxy.url, await stack.agentToken(tenant));
    const key = randomUUID();
    const fetches = recordFetches();
    try {
      proxy.closeNextRequest();
      const answer = await client.post<{ events: unknown[]; memories: unknown[] }>(
        `/v1/tenants/${tenant}/batches`,
        { events: [sampleEvent()], memories: [sampleMemory()] },
        { idempotencyKey: key },
      );
      expect(answer.events).toHaveLength(1);
      expect(answer.memories).toHaveLength(1);
    } finally {
      fetches.restore();
    }
    // The first send met the closed socket; the second, on a fresh connection, under the same key.
    expect(fetches.sent).toHaveLength(2);
    expect(fetches.sent.map((f) => f.key)).toEqual([key, key]);
    expect(CLOSED_UNDER_REQUEST).toContain(fetches.sent[0]!.failure);
    expect(fetches.sent[1]!.failure).toBeNull();
    expect(await stack.storedRecords(tenant)).toEqual({ events: 1, memories: 1 });
  });

  it('sent again under its key, a write that landed is answered and not written twice', async () => {
    const tenant = uniqueTenant();
    const client = createApiClient(stack.api.url, await stack.agentToken(tenant));
    const batch = { events: [sampleEvent()], memories: [sampleMemory()] };
    const key = randomUUID();
    const first = await client.post(`/v1/tenants/${tenant}/batches`, batch, { idempotencyKey: key });
    const again = await client.post(`/v1/tenants/${tenant}/batches`, batch, { idempotencyKey: key });
    expect(again).toEqual(first);
    expect(await stack.storedRecords(tenant)).toEqual({ events: 1, memories: 1 });
  });

  it('refuses a different write under a key already used, naming the header, and writes nothing of it', async () => {
    const tenant = uniqueTenant();
    const token = await stack.agentToken(tenant);
    const client = createApiClient(stack.api.url, token);
    const key = randomUUID();
    const batch = { events: [sampleEvent()], memories: [sampleMemory()] };
    const first = await client.post(`/v1/tenants/${tenant}/batches`, batch, { idempotencyKey: key });
    const other = { events: [sampleEvent({ content: 'Another event entirely, under the same key.' })], memories: [] };
    const refused = await fetch(`${stack.api.url}/v1/tenants/${tenant}/batches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(other),
    });
    expect(refused.status).toBe(409);
    const error = ((await refused.json()) as { error: { field: string; message: string } }).error;
    expect(error.field).toBe('Idempotency-Key');
    expect(error.message).not.toContain('Another event');
    expect(await stack.storedRecords(tenant)).toEqual({ events: 1, memories: 1 });
    // The first write, sent again under its key, is still answered as it was.
    expect(await client.post(`/v1/tenants/${tenant}/batches`, batch, { idempotencyKey: key })).toEqual(first);
  });

  it('through a plain fetch, fails on the closed connection, and the server never received the write', async () => {
    const tenant = uniqueTenant();
    const token = await stack.agentToken(tenant);
    const forwardedBefore = proxy.forwardedBytes();
    proxy.closeNextRequest();
    const failure = await fetch(`${proxy.url}/v1/tenants/${tenant}/batches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events: [sampleEvent()], memories: [sampleMemory()] }),
    }).then(
      (response) => `answered ${response.status}`,
      (error: unknown) => error as TypeError & { cause?: { code?: string; message?: string } },
    );
    expect(failure).toBeInstanceOf(TypeError);
    const cause = (failure as TypeError & { cause?: { code?: string; message?: string } }).cause;
    expect(CLOSED_UNDER_REQUEST).toContain(cause?.code);
    expect(proxy.forwardedBytes()).toBe(forwardedBefore);
    // A later write of the tenant, answered: anything of the dropped one that had reached the server would have been
    // stored by now, so only this one may be there.
    const later = createApiClient(proxy.url, token);
    await later.post(`/v1/tenants/${tenant}/batches`, { events: [sampleEvent()], memories: [] });
    expect(await stack.storedRecords(tenant)).toEqual({ events: 1, memories: 0 });
  });

  it('refuses a malformed Idempotency-Key, naming the header', async () => {
    const tenant = uniqueTenant();
    const response = await fetch(`${stack.api.url}/v1/tenants/${tenant}/batches`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await stack.agentToken(tenant)}`,
        'content-type': 'application/json',
        'idempotency-key': 'two words',
      },
      body: JSON.stringify({ events: [sampleEvent()], memories: [] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { field: string } }).error.field).toBe('Idempotency-Key');
    expect(await stack.storedRecords(tenant)).toEqual({ events: 0, memories: 0 });
  });
});
