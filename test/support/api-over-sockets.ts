/**
 * An API in a process of its own, with a worker in the test's process on their task queue: a client in the test
 * can block its own event loop while the server keeps its clock, as two machines would.
 */
import { createServices } from '../../app/services.js';
import type { Runtime } from '../../app/runtime.js';
import { mintToken } from '../../src/governance/auth/tokens.js';
import { Collections } from '../../src/substrate/mongo/collections.js';
import { freePort } from '../../stack/processes.js';
import { startApiProcess, type ApiProcess } from './api-process.js';
import { TEST_INDEX_SETTINGS } from './app.js';
import { startWorker, testRuntime, uniqueId, type RunningWorker } from './harness.js';

export interface ApiOverSockets {
  api: ApiProcess;
  /** An agent's token in `tenant`. */
  agentToken(tenant: string): Promise<string>;
  /** Events and memories stored for the tenant, counted in the database. */
  storedRecords(tenant: string): Promise<{ events: number; memories: number }>;
  close(): Promise<void>;
}

/** `env`: the API process's settings over the test defaults (none: the production defaults). */
export async function startApiOverSockets(env: Record<string, string> = {}): Promise<ApiOverSockets> {
  const runtime: Runtime = testRuntime();
  const taskQueue = uniqueId('tq');
  const services = createServices(runtime, { taskQueue, indexSettings: TEST_INDEX_SETTINGS });
  await services.ensureIndexes();
  const worker: RunningWorker = await startWorker(runtime, taskQueue, services);
  const secret = runtime.config.tokens.hs256Secret!;
  const api = startApiProcess({ port: await freePort(), taskQueue, tokenSecret: secret, env });
  await api.ready();
  return {
    api,
    agentToken: (tenant) => mintToken(secret, { id: uniqueId('agent'), tenant, roles: ['agent'] }, 3600),
    async storedRecords(tenant) {
      const [events, memories] = await Promise.all(
        [Collections.events, Collections.memories].map((c) => runtime.db.collection(c).countDocuments({ tenant })),
      );
      return { events: events!, memories: memories! };
    },
    async close() {
      api.kill('SIGTERM');
      await api.waitExit();
      await worker.stop();
      await runtime.close();
    },
  };
}
