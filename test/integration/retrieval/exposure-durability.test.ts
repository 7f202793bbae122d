/**
 * A retrieval's trace outlives the API process that answered it: the process is SIGKILLed the moment its answer
 * arrives, as a crash or an OOM kill would take it, and the erasure filed afterwards through another API process still
 * certifies that the subject's record was retrieved. An exposure held only in memory and written after answering would
 * be lost here.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../../app/services.js';
import type { Runtime } from '../../../app/runtime.js';
import { mintToken } from '../../../src/governance/auth/tokens.js';
import type { Role } from '../../../src/governance/auth/principal.js';
import { freePort } from '../../../stack/processes.js';
import { startApiProcess, type ApiProcess } from '../../support/api-process.js';
import { TEST_INDEX_SETTINGS, uniqueTenant } from '../../support/app.js';
import { startWorker, testRuntime, uniqueId, type RunningWorker } from '../../support/harness.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

describe('a retrieval answered just before its API process is killed', () => {
  const tenant = uniqueTenant();
  const subject = `customer-${randomUUID().slice(0, 8)}`;
  const canary = `CANARY${randomUUID().slice(0, 8)}`;
  let runtime: Runtime;
  let services: Services;
  let worker: RunningWorker;
  let taskQueue: string;
  const apis: ApiProcess[] = [];

  const token = (roles: Role[], id: string) =>
    mintToken(runtime.config.tokens.hs256Secret!, { id, tenant, roles }, 3600);
  async function call<T>(
    api: ApiProcess,
    path: string,
    roles: Role[],
    body?: object,
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${api.url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: {
        authorization: `Bearer ${await token(roles, roles[0] === 'agent' ? 'agent-1' : 'dpo-1')}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as T };
  }
  async function startApi(): Promise<ApiProcess> {
    const api = startApiProcess({ port: await freePort(), taskQueue, tokenSecret: runtime.config.tokens.hs256Secret! });
    apis.push(api);
    await api.ready();
    return api;
  }

  beforeAll(async () => {
    runtime = testRuntime();
    taskQueue = uniqueId('tq');
    services = createServices(runtime, { taskQueue, indexSettings: TEST_INDEX_SETTINGS });
    await services.ensureIndexes();
    await services.index.ensureTenantIndex(tenant);
    worker = await startWorker(runtime, taskQueue, services);
  }, 180_000);
  afterAll(async () => {
    for (const api of apis) if (!api.exited) api.kill('SIGKILL');
    await worker?.stop();
    await runtime?.close();
  });

  it('still reaches the certificate of an erasure filed afterwards', async () => {
    const first = await startApi();
    const content = `${canary} wants parcels left at the Porto depot.`;
    const written = await call<{ memories: { id: string; status: string }[] }>(
      first,
      `/v1/tenants/${tenant}/batches`,
      ['agent'],
      {
        events: [sampleEvent({ subjects: [subject], content })],
        memories: [sampleMemory({ subjects: [subject], attribute: 'delivery', kind: 'fact', content })],
      },
    );
    expect(written.status).toBe(201);
    const memoryId = written.body.memories[0]!.id;
    expect(written.body.memories[0]!.status).toBe('active');

    const retrieved = await call<{ items: { id: string }[] }>(first, `/v1/tenants/${tenant}/retrieve`, ['agent'], {
      query: `${canary} Porto depot parcels`,
      k: 5,
    });
    // Killed the moment the answer is in: nothing the process meant to do after answering gets done.
    first.kill('SIGKILL');
    expect(retrieved.status).toBe(200);
    expect(retrieved.body.items.map((i) => i.id)).toContain(memoryId);
    expect(await first.waitExit()).toEqual({ code: null, signal: 'SIGKILL' });

    const second = await startApi();
    const filed = await call<{ id: string }>(second, `/v1/tenants/${tenant}/erasure-requests`, ['dpo'], {
      selector: { subjectId: subject },
      legalGround: 'art17-1a',
    });
    expect(filed.status).toBe(202);
    const deadline = Date.now() + 150_000;
    let state = '';
    while (state !== 'completed' && Date.now() < deadline) {
      state = (await services.erasureRequests.get(tenant, filed.body.id))?.state ?? '';
      if (state !== 'completed') await new Promise((r) => setTimeout(r, 500));
    }
    expect(state).toBe('completed');
    const [certificate] = await services.certificates.byRequest(tenant, filed.body.id);
    expect(certificate?.exposure?.retrievals).toBeGreaterThanOrEqual(1);
    expect(certificate?.exposure?.byRoute?.retrieve).toBeGreaterThanOrEqual(1);
  }, 240_000);
});
