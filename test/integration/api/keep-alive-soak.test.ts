import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiOverSockets, type ApiOverSockets } from '../../support/api-over-sockets.js';
import { uniqueTenant } from '../../support/app.js';
import { sampleEvent } from '../../support/samples.js';

const CLIENTS = 4;
const RUN_MS = 5 * 60_000;
/** Past the default keep-alive (65 s) and a balancer's (60 s): some gaps outlast each. */
const LONGEST_GAP_MS = 70_000;

/** mulberry32: a small seeded generator, so that a failing run can be replayed with its seed. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * With the default settings, plain fetch clients (no retry of their own) idle for random gaps, then call: accepted
 * writes, writes refused for a bad field, and calls refused for want of a token. None meets a closed socket.
 */
describe('clients idle up to 70 s between calls, against the default keep-alive', () => {
  let stack: ApiOverSockets;
  beforeAll(async () => {
    stack = await startApiOverSockets();
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it(
    'for five minutes, no call fails on its connection, and every accepted write is stored once',
    async () => {
      const seed = Number(process.env.LETHE_SOAK_SEED ?? Math.floor(Math.random() * 2 ** 31));
      console.log(`keep-alive soak seed: ${seed} (replay with LETHE_SOAK_SEED=${seed})`);
      const random = seededRandom(seed);
      const tenant = uniqueTenant();
      const token = await stack.agentToken(tenant);
      const batches = `${stack.api.url}/v1/tenants/${tenant}/batches`;
      const tally = { accepted: 0, refused: 0, socketErrors: [] as string[], unexpected: [] as string[] };
      const until = Date.now() + RUN_MS;

      const call = async (kind: number): Promise<void> => {
        const [expected, request] =
          kind < 0.4
            ? [201, { headers: { authorization: `Bearer ${token}` }, body: { events: [sampleEvent()], memories: [] } }]
            : kind < 0.7
              ? [400, { headers: { authorization: `Bearer ${token}` }, body: { events: [{ source: 'crm' }] } }]
              : [401, { headers: {}, body: { events: [sampleEvent()], memories: [] } }];
        try {
          const response = await fetch(batches, {
            method: 'POST',
            headers: { ...request.headers, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
            body: JSON.stringify(request.body),
          });
          await response.text();
          if (response.status !== expected) tally.unexpected.push(`${response.status} where ${expected}`);
          else if (expected === 201) tally.accepted++;
          else tally.refused++;
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause;
          tally.socketErrors.push(cause?.code ?? String(error));
        }
      };

      const client = async (): Promise<void> => {
        for (;;) {
          const gap = random() * LONGEST_GAP_MS;
          if (Date.now() + gap > until) return;
          await sleep(gap);
          await call(random());
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));

      console.log(`keep-alive soak: ${JSON.stringify({ ...tally, socketErrors: tally.socketErrors.length })}`);
      expect(tally.socketErrors).toEqual([]);
      expect(tally.unexpected).toEqual([]);
      expect(tally.accepted + tally.refused).toBeGreaterThan(0);
      expect(await stack.storedRecords(tenant)).toEqual({ events: tally.accepted, memories: 0 });
    },
    RUN_MS + 120_000,
  );
});
