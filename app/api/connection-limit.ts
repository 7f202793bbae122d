import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How often refused connections are reported: a caller opening sockets in a loop must not flood the log too. */
const REPORT_EVERY_MS = 60_000;

/**
 * Caps the connections one client address holds open, idle or busy. A kept-alive socket outlasts a balancer's idle
 * timeout (a minute), so a caller that opens sockets and never uses them could otherwise hold the server's file
 * descriptors. A connection past the cap is closed at once, before a byte is read; the count is per process.
 * `report` hears how many were refused, at most once a minute.
 */
export function limitConnectionsPerAddress(server: Server, perAddress: number, report: (refused: number) => void) {
  const open = new Map<string, number>();
  let refused = 0;
  let reportedAt = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return;
    const held = open.get(address) ?? 0;
    if (held >= perAddress) {
      socket.destroy();
      refused += 1;
      if (Date.now() - reportedAt >= REPORT_EVERY_MS) {
        report(refused);
        refused = 0;
        reportedAt = Date.now();
      }
      return;
    }
    open.set(address, held + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
