/**
 * The OpenAI-compatible verifier adapter against a local STUB server (test/support/chat-completions-stub.ts):
 * no such endpoint runs on our machines, so this stub speaking the chat-completions protocol is the only one
 * allowed. It checks the request the adapter sends and what each kind of answer becomes in the audit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditDerivation } from '../../../src/governance/derivation/derivation-audit.js';
import { createOpenAiCompatibleVerifier } from '../../../src/governance/derivation/openai-compatible-verifier.js';
import {
  obligationIdsOf,
  startChatCompletionsStub,
  type ChatCompletionsStub,
  type StubReply,
  type ChatRequest,
} from '../../support/chat-completions-stub.js';

const MEMORY = 'The user moved to Berlin because of the new job at Siemens.';
const input = {
  content: MEMORY,
  cited: [{ id: 'evt_a', text: 'I moved to Berlin.', at: new Date('2026-11-02T00:00:00Z') }],
  pool: [{ id: 'evt_b', text: 'The Siemens job is why I moved to Berlin.', at: new Date('2026-11-01T00:00:00Z') }],
  before: new Date('2026-11-05T00:00:00Z'),
};

describe('the OpenAI-compatible verifier (against a local stub server)', () => {
  let stub: ChatCompletionsStub;
  let reply: (request: ChatRequest) => StubReply = () => 'hang';
  beforeAll(async () => {
    stub = await startChatCompletionsStub((r) => reply(r));
  });
  afterAll(async () => {
    await stub?.close();
  });
  const verifier = () => createOpenAiCompatibleVerifier({ url: stub.url, model: 'stub-model', apiKey: 'test-key' });
  const allSupported = (r: ChatRequest) => ({
    verdicts: obligationIdsOf(r).map((id) => ({ id, label: 'supported', evidence: ['p1', 'p2'] })),
  });

  it('sends the obligations and the unmarked evidence in time order, and maps its verdict back to event ids', async () => {
    reply = allSupported;
    const before = stub.requests.length;
    const verdict = await auditDerivation(input, { verifier: verifier(), timeoutMs: 2_000 });
    // Two requests, one per view: the expanded one carries both passages.
    const sent = stub.requests.slice(before);
    expect(sent).toHaveLength(2);
    const request = sent.find((r) => r.messages[1]!.content.includes('Siemens job'))!;
    expect(request.model).toBe('stub-model');
    const body = JSON.parse(request.messages[1]!.content) as {
      obligations: { id: string; kind: string }[];
      passages: { id: string; text: string }[];
    };
    expect(body.obligations.map((o) => o.kind)).toEqual(['claim', 'claim', 'relation']);
    // Aliases only, in time order, nothing saying which passage was cited.
    expect(body.passages).toEqual([
      { id: 'p1', text: 'The Siemens job is why I moved to Berlin.' },
      { id: 'p2', text: 'I moved to Berlin.' },
    ]);
    expect(verdict).toMatchObject({
      label: 'supported',
      verifier: { id: 'openai-compatible', version: '1/stub-model' },
    });
    expect(verdict.obligations[0]!.evidenceIds.sort()).toEqual(['evt_a', 'evt_b']);
  });

  it('takes a verdict of contradicted and insufficient labels as the model gave them', async () => {
    reply = (r) => ({
      verdicts: obligationIdsOf(r).map((id, i) => ({
        id,
        label: i === 2 ? 'contradicted' : 'supported',
        evidence: [],
      })),
    });
    expect((await auditDerivation(input, { verifier: verifier(), timeoutMs: 2_000 })).label).toBe('contradicted');
  });

  it('turns an error status, a non-JSON answer, a missing obligation or an unknown label into unresolved', async () => {
    const answers: ((r: ChatRequest) => StubReply)[] = [
      () => ({ status: 500 }),
      () => ({ raw: 'I think it is supported.' }),
      (r) => ({
        verdicts: obligationIdsOf(r)
          .slice(1)
          .map((id) => ({ id, label: 'supported' })),
      }),
      (r) => ({ verdicts: obligationIdsOf(r).map((id) => ({ id, label: 'probably' })) }),
    ];
    for (const answer of answers) {
      reply = answer;
      expect(await auditDerivation(input, { verifier: verifier(), timeoutMs: 2_000 })).toMatchObject({
        label: 'unresolved',
        unresolvedBecause: 'verifier-error',
      });
    }
  });

  it('turns a timeout into unresolved, never a label the model did not give', async () => {
    // The stub never answers: only the audit's own deadline can end this call, and the label says it did.
    reply = () => 'hang';
    expect(await auditDerivation(input, { verifier: verifier(), timeoutMs: 200 })).toMatchObject({
      label: 'unresolved',
      unresolvedBecause: 'timeout',
    });
  });
});
