import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsAccessAllowed } from './metrics-access.js';

export interface MetricsListener {
  /** `http://host:port`, the port the system gave when 0 was asked for. */
  url: string;
  close(): Promise<void>;
}

/**
 * `/metrics` and `/healthz` for a process that serves no HTTP of its own (the worker). `/healthz` says the process
 * is alive; whether it polls is Temporal's to show (its task queue's pollers).
 */
export async function startMetricsListener(options: {
  host: string;
  port: number;
  token?: string;
  metrics: { contentType: string; render(): Promise<string> };
}): Promise<MetricsListener> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') return answer(response, 405, 'method not allowed\n');
    if (path === '/healthz') return answer(response, 200, '{"status":"ok"}', 'application/json');
    if (path !== '/metrics') return answer(response, 404, 'not found\n');
    if (!metricsAccessAllowed(options.token, request.headers.authorization)) {
      return answer(response, 401, 'the metrics token is required\n');
    }
    options.metrics.render().then(
      (text) => answer(response, 200, text, options.metrics.contentType),
      () => answer(response, 500, 'metrics could not be collected\n'),
    );
  });
  // The scraper reads and goes: no idle connection may hold the process at shutdown.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(response: http.ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}
