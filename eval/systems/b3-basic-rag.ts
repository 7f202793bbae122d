/**
 * B3, basic RAG (seed 004 §7.3): every raw event is one chunk, embedded with the embedder Lethe is configured with,
 * in one in-process index; a question takes the top-k chunks by cosine similarity, of the asker's tenant (the
 * read-side filter a basic deployment has), packed in rank order into the budget. No lifecycle: nothing is
 * superseded, nothing is private, an erasure deletes the chunks filed under the subject.
 */
import { estimateTokens } from '../../src/retrieval/context-packing.js';
import type { Embedder } from '../../src/substrate/search/embedder.port.js';
import { canariesIn, type Context } from '../metrics.js';
import type { ScriptEvent } from '../workloads/script.js';
import { packInOrder, type Ask, type ErasureProbe, type EvalSystem } from './system.js';

interface Chunk {
  event: ScriptEvent;
  vector: Float32Array;
}

const unit = (v: readonly number[]): Float32Array => {
  const norm = Math.sqrt(v.reduce((n, x) => n + x * x, 0)) || 1;
  return Float32Array.from(v, (x) => x / norm);
};

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

export function createBasicRag(embedder: Embedder, k: number): EvalSystem {
  let chunks: Chunk[] = [];
  const search = async (tenant: string, text: string): Promise<ScriptEvent[]> => {
    const q = unit((await embedder.embed([text]))[0]!);
    return chunks
      .filter((c) => c.event.tenant === tenant)
      .map((c) => ({ c, s: cosine(q, c.vector) }))
      .sort((a, b) => b.s - a.s)
      .slice(0, k)
      .map((x) => x.c.event);
  };
  return {
    name: 'B3 basic RAG',
    async write(events) {
      const vectors = await embedder.embed(events.map((e) => e.text));
      events.forEach((event, i) => chunks.push({ event, vector: unit(vectors[i]!) }));
    },
    async ask(q: Ask, budget: number): Promise<Context> {
      const started = performance.now();
      const packed = packInOrder(await search(q.tenant, q.text), (e) => estimateTokens(e.text), budget);
      return {
        items: packed.map((e) => ({ eventId: e.id, text: e.text, notInForce: false })),
        tokens: packed.reduce((n, e) => n + estimateTokens(e.text), 0),
        ms: performance.now() - started,
      };
    },
    async erase(tenant, subject) {
      chunks = chunks.filter((c) => !(c.event.tenant === tenant && c.event.subjects.includes(subject)));
    },
    async probe(tenant, canaries, question): Promise<ErasureProbe> {
      const stored = chunks.filter((c) => c.event.tenant === tenant).map((c) => c.event.text);
      const context = await this.ask(question, 100_000);
      return {
        // The chunks are the store and the index at once.
        store: canariesIn(stored, canaries),
        index: canariesIn(stored, canaries),
        context: canariesIn(
          context.items.map((i) => i.text),
          canaries,
        ),
      };
    },
    async storedBytes() {
      return chunks.reduce((n, c) => n + Buffer.byteLength(JSON.stringify(c.event)) + 4 * c.vector.length, 0);
    },
    async close() {},
  };
}
