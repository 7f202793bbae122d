/**
 * Kept-alive sockets live 65 s: one address must not hold more than its share of the server's connections. A real
 * HTTP server on a loopback port, real sockets.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { limitConnectionsPerAddress } from '../../../app/api/connection-limit.js';

/** Resolves true when the server closed the socket before answering, false when it answered. */
function outcome(socket: net.Socket): Promise<'answered' | 'closed'> {
  return new Promise((resolve) => {
    let answered = false;
    socket.on('data', () => {
      answered = true;
      resolve('answered');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answered ? 'answered' : 'closed'));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
  });
}

describe('the per-address connection cap', () => {
  const open: net.Socket[] = [];
  let server: http.Server | undefined;
  afterEach(async () => {
    for (const s of open.splice(0)) s.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('closes a connection past the cap at once, reports it, and admits one again when a held one closes', async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    server.keepAliveTimeout = 60_000;
    const reports: number[] = [];
    limitConnectionsPerAddress(server, 2, (refused) => reports.push(refused));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const connect = async () => {
      const socket = net.connect(port, '127.0.0.1');
      open.push(socket);
      await new Promise((resolve) => socket.once('connect', resolve));
      return socket;
    };
    const [first, second] = [await connect(), await connect()];
    expect(await outcome(first)).toBe('answered');
    expect(await outcome(second)).toBe('answered');
    // Both are kept alive and idle: a third from the same address is closed unread.
    expect(await outcome(await connect())).toBe('closed');
    expect(reports).toEqual([1]);
    first.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await outcome(await connect())).toBe('answered');
  });
});
