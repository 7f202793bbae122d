import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApiServer } from '../../../app/api/server.js';
import { createLogger } from '../../../src/observability/logger.js';
import { testConfig } from '../../support/harness.js';

/** Resolves when the server closes the socket; the test's own timeout bounds the wait. */
function closedByServer(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => undefined);
  });
}

/**
 * Over a real socket (inject has none): a request must arrive whole within the request timeout, however slowly
 * its bytes trickle in. A short timeout is configured so that the test is short.
 */
describe('a client that sends its request slowly is cut off', () => {
  let api: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    api = await buildApiServer({
      log: createLogger('silent'),
      probes: [],
      limits: testConfig({ LETHE_HTTP_REQUEST_TIMEOUT_MS: '1000' }).limits,
    });
    await api.listen({ host: '127.0.0.1', port: 0 });
    port = (api.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await api?.close();
  });

  it('closes a connection whose headers trickle in one line at a time and never end', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const closed = closedByServer(socket);
    socket.write('GET /healthz HTTP/1.1\r\nHost: lethe\r\n');
    // Each line keeps the socket busy, so an idle timeout alone would never fire.
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write(`X-Slow-${Date.now()}: 1\r\n`);
    }, 100);
    try {
      const answer = await closed;
      // Node answers 408 when it can; either way the socket is gone.
      expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  }, 20_000);

  it('still serves a client that sends its request at once', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const closed = closedByServer(socket);
    socket.write('GET /healthz HTTP/1.1\r\nHost: lethe\r\nConnection: close\r\n\r\n');
    expect(await closed).toMatch(/^HTTP\/1\.1 200/);
  });
});
