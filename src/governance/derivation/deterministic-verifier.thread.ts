/**
 * The deterministic verifier's thread: judges one evidence view per message and answers with the verdicts (ids and
 * labels). It holds nothing between messages; the pool stops it when a view runs past its deadline.
 */
import { parentPort } from 'node:worker_threads';
import { verifyDeterministically } from './deterministic-verifier.js';
import type { VerifyRequest, VerifyResponse } from './threaded-verifier.js';

const port = parentPort;
if (!port) throw new Error('deterministic-verifier.thread: must run as a worker thread');
port.on('message', (request: VerifyRequest) => {
  let response: VerifyResponse;
  try {
    response = { id: request.id, verdicts: verifyDeterministically(request.obligations, request.evidence) };
  } catch (error) {
    // The error's name only: a message could quote the text it failed on.
    response = { id: request.id, error: error instanceof Error ? error.name : 'Error' };
  }
  port.postMessage(response);
});
port.postMessage({ ready: true } satisfies VerifyResponse);
