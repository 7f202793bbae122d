/**
 * STUB, for tests only: a local HTTP server speaking the OpenAI-compatible chat-completions protocol. No such
 * endpoint runs on our machines, so the verifier adapter is tested against this. It answers with whatever the
 * test's handler returns, can hang (to test timeouts), and keeps the requests it received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
}

/** What the stub does with a request: answer with a verdict body, reply with a status, or never answer. */
export type StubReply = { verdicts: unknown } | { status: number } | { raw: string } | 'hang';

export interface ChatCompletionsStub {
  /** Base URL to configure as `LETHE_VERIFIER_URL`. */
  url: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

export async function startChatCompletionsStub(
  /** May answer later (a promise): a verifier held until the test releases it. */
  reply: (request: ChatRequest) => StubReply | Promise<StubReply>,
): Promise<ChatCompletionsStub> {
  const requests: ChatRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => void answer(req, res, body));
  });
  async function answer(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const request = JSON.parse(body) as ChatRequest;
    requests.push(request);
    const r = await reply(request);
    if (res.destroyed) return;
    if (r === 'hang') {
      hanging.add(res);
      return;
    }
    if ('status' in r) {
      res.writeHead(r.status).end();
      return;
    }
    const content = 'raw' in r ? r.raw : JSON.stringify({ verdicts: r.verdicts });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'stub',
        object: 'chat.completion',
        model: request.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      }),
    );
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The obligations a stub request asked about (ids), read from the user message. */
export function obligationIdsOf(request: ChatRequest): string[] {
  const user = request.messages.find((m) => m.role === 'user');
  return (JSON.parse(user?.content ?? '{}') as { obligations?: { id: string }[] }).obligations?.map((o) => o.id) ?? [];
}
