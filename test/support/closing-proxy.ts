/**
 * A TCP proxy in front of a real server that plays the keep-alive race on demand: once armed, the next request to
 * arrive finds its connection closed, as a server that timed the connection out a moment before would leave it. The
 * request is read and dropped, never forwarded, so the server never receives it.
 */
import net from 'node:net';

export interface ClosingProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The next request's connection closes under it, before any answer. */
  closeNextRequest(): void;
  /** Bytes this proxy has written to the server so far: what a dropped request adds nothing to. */
  forwardedBytes(): number;
  close(): Promise<void>;
}

export async function startClosingProxy(target: URL): Promise<ClosingProxy> {
  let armed = false;
  let forwarded = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk: Buffer) => {
      if (armed) {
        armed = false;
        client.destroy();
        upstream.destroy();
        return;
      }
      forwarded += chunk.length;
      upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    closeNextRequest: () => void (armed = true),
    forwardedBytes: () => forwarded,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
