/**
 * An HTTP proxy in front of a real AWS KMS API (the stack's emulator, which other test files share) that answers the
 * way AWS KMS answers a caller over its request quota, without touching the KMS itself:
 *
 * - `pass` forwards every request as it came (method, path, headers, body) and relays the KMS's answer;
 * - `throttle` answers every request with KMS's throttling refusal (HTTP 400, `ThrottlingException`) and forwards none;
 * - `throttle-first` with a count throttles that many of the next requests, then passes the rest.
 *
 * The mode is read per request, so a kept-alive connection meets the new mode at its next request. Every request is
 * recorded with the KMS operation it names and the SDK's attempt number, so that a test can tell a retry from a new
 * call.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';

export type ThrottleMode = 'pass' | 'throttle' | 'throttle-first';

/** One request the proxy received. */
export interface SeenRequest {
  /** The KMS operation, from `X-Amz-Target` (`TrentService.Encrypt` → `Encrypt`). */
  operation: string;
  /** The SDK's attempt number for this call (`amz-sdk-request: attempt=2; max=3`), 0 when absent. */
  attempt: number;
  /** The SDK's attempts per call, 0 when absent. */
  maxAttempts: number;
  throttled: boolean;
}

export interface ThrottleProxy {
  /** `http://127.0.0.1:<port>`: the endpoint clients use instead of the KMS. */
  readonly url: string;
  mode(next: 'pass' | 'throttle'): void;
  mode(next: 'throttle-first', count: number): void;
  /** Requests received since the proxy started, in any mode. */
  readonly seen: number;
  /** Requests answered with throttling since the proxy started. */
  readonly throttled: number;
  /** Every request received, oldest first. */
  readonly requests: readonly SeenRequest[];
  close(): Promise<void>;
}

/** AWS KMS's answer to a caller over its quota (the awsJson1_1 protocol's error shape). */
const THROTTLED_BODY = JSON.stringify({ __type: 'ThrottlingException', message: 'Rate exceeded' });

/** Headers that describe one connection, not the message: never relayed as they came. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

const readBody = (message: http.IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolve(Buffer.concat(chunks)));
    message.on('error', reject);
  });

const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(',') : (value ?? ''));

export async function startThrottleProxy(target: URL): Promise<ThrottleProxy> {
  let mode: ThrottleMode = 'pass';
  let remaining = 0;
  let throttledCount = 0;
  const requests: SeenRequest[] = [];
  // Connections to the KMS of this proxy's own, so that closing the proxy leaves none open.
  const agent = new http.Agent({ keepAlive: true });
  const sockets = new Set<net.Socket>();

  const shouldThrottle = () => {
    if (mode === 'throttle') return true;
    if (mode === 'throttle-first' && remaining > 0) {
      remaining--;
      return true;
    }
    return false;
  };

  const forward = (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) => {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    }
    // The body is sent whole: its length replaces a chunked encoding the client may have used.
    headers['content-length'] = body.length;
    const upstream = http.request(
      { agent, host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (answer) => {
        readBody(answer).then(
          (payload) => {
            const relayed: http.OutgoingHttpHeaders = {};
            for (const [name, value] of Object.entries(answer.headers)) {
              if (!HOP_BY_HOP.has(name) && value !== undefined) relayed[name] = value;
            }
            relayed['content-length'] = payload.length;
            res.writeHead(answer.statusCode ?? 502, relayed);
            res.end(payload);
          },
          () => res.destroy(),
        );
      },
    );
    // The KMS itself failed to answer: the client sees a gateway error, as behind any proxy.
    upstream.on('error', () => {
      if (res.headersSent) return res.destroy();
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('the KMS behind the proxy did not answer');
    });
    upstream.end(body);
  };

  const server = http.createServer((req, res) => {
    // The decision is taken as the request arrives, so that concurrent requests share one count.
    const throttle = shouldThrottle();
    const sdkRequest = /attempt=(\d+);\s*max=(\d+)/.exec(headerText(req.headers['amz-sdk-request']));
    requests.push({
      operation: headerText(req.headers['x-amz-target']).replace(/^TrentService\./, ''),
      attempt: sdkRequest ? Number(sdkRequest[1]) : 0,
      maxAttempts: sdkRequest ? Number(sdkRequest[2]) : 0,
      throttled: throttle,
    });
    if (throttle) throttledCount++;
    readBody(req).then(
      (body) => {
        if (!throttle) return forward(req, body, res);
        res.writeHead(400, {
          'x-amzn-RequestId': randomUUID(),
          'x-amzn-ErrorType': 'ThrottlingException',
          'content-type': 'application/x-amz-json-1.1',
          'content-length': Buffer.byteLength(THROTTLED_BODY),
        });
        res.end(THROTTLED_BODY);
      },
      () => res.destroy(),
    );
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    mode(next: ThrottleMode, count?: number) {
      mode = next;
      remaining = next === 'throttle-first' ? (count ?? 0) : 0;
    },
    get seen() {
      return requests.length;
    },
    get throttled() {
      return throttledCount;
    },
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
