/**
 * A TCP proxy in front of a real server, for faults a test can switch on and off without touching the server (which
 * other test files share): `pass` forwards bytes both ways; `refuse` resets every connection as it opens (the server
 * is down); `hang` accepts connections and never answers (the server is paused, or a network drops everything).
 * Switching mode resets the connections already open, so that a client's kept-alive socket meets the new mode too.
 */
import net from 'node:net';

export type ProxyMode = 'pass' | 'refuse' | 'hang';

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: where clients connect instead of the server. */
  readonly url: string;
  mode(next: ProxyMode): void;
  /** Connections opened since the proxy started, in any mode. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startFaultProxy(target: URL): Promise<FaultProxy> {
  let mode: ProxyMode = 'pass';
  let opened = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    opened++;
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => undefined);
    if (mode === 'refuse') return client.resetAndDestroy();
    if (mode === 'hang') return; // read into nowhere; nothing is ever written back
    const upstream = net.connect(Number(target.port), target.hostname);
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    mode(next) {
      mode = next;
      for (const socket of open) socket.resetAndDestroy();
      open.clear();
    },
    get connections() {
      return opened;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
