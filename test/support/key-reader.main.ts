/**
 * A process of its own that holds records' data keys warm, as an API or worker process does: it builds the same
 * runtime (config, key vault, destroyed-key feed) and opens the records every 20 ms. It prints one JSON line when all
 * of them open, then one each time the set it can open changes, with the time; on SIGUSR2 it prints the set of its
 * next read begun after the signal, marked `answer`, changed or not; it exits on SIGTERM.
 *
 * Input: LETHE_READ_RECORDS, a JSON array of stored rows ({ _id, tenant, content }, content sealed).
 */
import { loadConfig } from '../../src/config/load-config.js';
import { createRuntime } from '../../app/runtime.js';
import type { ContentRecord } from '../../src/substrate/crypto/content-cipher.js';

const records = JSON.parse(process.env.LETHE_READ_RECORDS ?? '[]') as ContentRecord[];
const runtime = createRuntime(loadConfig(), 'lethe-key-reader');
let stopping = false;
process.on('SIGTERM', () => (stopping = true));
let asked = false;
process.on('SIGUSR2', () => (asked = true));

let last = '';
while (!stopping) {
  // A request that arrives during a read is answered by the next one.
  const answer = asked;
  asked = false;
  const opened = (await runtime.cipher.openAll(records)).map((r) => r._id).sort();
  const now = JSON.stringify(opened);
  if (now !== last || answer) {
    process.stdout.write(`${JSON.stringify({ at: Date.now(), opens: opened, ...(answer ? { answer } : {}) })}\n`);
    last = now;
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await runtime.close();
