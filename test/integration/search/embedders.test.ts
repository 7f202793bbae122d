/**
 * The real embedders: the local MiniLM model (from the stack's model directory) and the adapter for an
 * OpenAI-compatible endpoint, here served by a small local HTTP server that answers with the same MiniLM
 * vectors (no such server runs on this machine otherwise), and what the index does when its vectors come from
 * another model than the process's.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import type { Embedder } from '../../../src/substrate/search/embedder.port.js';
import { createElasticsearchSearchIndex } from '../../../src/substrate/search/elasticsearch-search-index.js';
import { createHashingEmbedder } from '../../../src/substrate/search/hashing-embedder.js';
import {
  createMinilmEmbedder,
  EmbeddingModelError,
  MINILM_DIMS,
  MINILM_SHA256,
} from '../../../src/substrate/search/minilm-embedder.js';
import { REPO_DIR } from '../../support/cli-process.js';
import { createOpenAiEmbedder, EmbeddingServiceError } from '../../../src/substrate/search/openai-embedder.js';
import { SearchIndexError } from '../../../src/substrate/search/search-index-error.js';
import { testConfig, testRuntime, uniqueId } from '../../support/harness.js';
import { memoryRecord } from '../../support/samples.js';

const modelDir = (() => {
  const config = testConfig({ LETHE_EMBEDDER: 'minilm' });
  if (config.embedder.kind !== 'minilm') throw new Error('expected the minilm embedder');
  return config.embedder.modelDir;
})();

function cosine(a: number[], b: number[]): number {
  return a.reduce((sum, x, i) => sum + x * b[i]!, 0);
}

const ANA = {
  contact: 'Ana prefers e-mail; no phone calls before noon.',
  bakery: "Ana's bakery may upgrade to the premium plan; decision in November.",
  home: 'Ana lives in Porto.',
};

let minilm: Embedder;

beforeAll(() => {
  minilm = createMinilmEmbedder({ modelDir });
});

describe('the local MiniLM embedder', () => {
  it('ranks a paraphrased question next to the memory that answers it', async () => {
    const [query, contact, bakery, home] = await minilm.embed([
      'how does Ana want to be contacted?',
      ANA.contact,
      ANA.bakery,
      ANA.home,
    ]);
    expect(cosine(query!, contact!)).toBeGreaterThan(cosine(query!, bakery!) + 0.2);
    expect(cosine(query!, contact!)).toBeGreaterThan(cosine(query!, home!));
    // The lexical stand-in gets this one wrong, which is why the model exists.
    const hashing = createHashingEmbedder({ dims: 256 });
    const [hq, hc, hb] = await hashing.embed(['how does Ana want to be contacted?', ANA.contact, ANA.bakery]);
    expect(cosine(hq!, hc!)).toBeLessThanOrEqual(cosine(hq!, hb!));
  });

  it('gives unit vectors of 384 numbers, the same for the same text in any batch, zero for an empty text', async () => {
    const texts = ['Ana lives in Porto.', '', '   ', 'word '.repeat(600), 'ç\u0000\u200b🙂 odd bytes'];
    const vectors = await minilm.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const [i, v] of vectors.entries()) {
      expect(v).toHaveLength(MINILM_DIMS);
      expect(v.every(Number.isFinite)).toBe(true);
      const norm = Math.sqrt(cosine(v, v));
      if (texts[i]!.trim() === '') expect(norm).toBe(0);
      else expect(norm).toBeCloseTo(1, 5);
    }
    const [alone] = await minilm.embed(['Ana lives in Porto.']);
    expect(cosine(alone!, vectors[0]!)).toBeGreaterThan(0.99999);
  });

  it('refuses to start without its files, naming the setting', () => {
    expect(() => createMinilmEmbedder({ modelDir: '/nonexistent/model' })).toThrow(EmbeddingModelError);
    expect(() => createMinilmEmbedder({ modelDir: '/nonexistent/model' })).toThrow(/LETHE_EMBEDDING_MODEL_DIR/);
  });

  it('refuses files that do not match their pinned sha256 when it loads them, not only when they were fetched', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-model-'));
    try {
      // A tokenizer changed after the fetch: refused at start.
      fs.writeFileSync(path.join(dir, 'model.onnx'), 'not the model');
      fs.writeFileSync(path.join(dir, 'tokenizer.json'), '{}');
      expect(() => createMinilmEmbedder({ modelDir: dir })).toThrow(
        /tokenizer\.json .*does not match its pinned sha256/,
      );
      // The genuine tokenizer beside a replaced model: refused when the model is loaded, before onnxruntime reads it.
      fs.copyFileSync(path.join(modelDir, 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
      const embedder = createMinilmEmbedder({ modelDir: dir });
      await expect(embedder.embed(['hello'])).rejects.toThrow(/model\.onnx .*does not match its pinned sha256/);
      // The pins are the ones the fetch checks.
      const fetchScript = fs.readFileSync(path.join(REPO_DIR, 'stack', 'embedding-model', 'fetch.sh'), 'utf8');
      expect(fetchScript).toContain(`MODEL_SHA256=${MINILM_SHA256['model.onnx']}`);
      expect(fetchScript).toContain(`TOKENIZER_SHA256=${MINILM_SHA256['tokenizer.json']}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('hybrid search with the MiniLM embedder on the real index', () => {
  let runtime: Runtime;
  beforeAll(() => {
    runtime = testRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('ranks the contact preference first on the vector side of the paraphrased question', async () => {
    const tenant = uniqueId('t');
    const index = createElasticsearchSearchIndex(runtime.es, {
      prefix: runtime.config.elasticsearch.indexPrefix,
      embedder: minilm,
    });
    try {
      const records = Object.entries(ANA).map(([id, content]) => memoryRecord(tenant, `mem_${id}`, content));
      await index.upsert(tenant, records, { refresh: 'wait_for' });
      const hits = await index.search(tenant, { text: 'how does Ana want to be contacted?', k: 3, filters: {} });
      const rank = (id: string) => hits.find((h) => h.id === id)?.knnRank;
      expect(rank('mem_contact')).toBe(1);
      expect(rank('mem_bakery')).toBe(3);
      // On three documents BM25 prefers the bakery plan, and fusion ties the two: both lead the answer.
      expect(hits.slice(0, 2).map((h) => h.id)).toContain('mem_contact');
    } finally {
      await index.dropTenant(tenant);
    }
  });

  it('keeps vectors of two models apart: writes and vector probes wait, search falls back to BM25', async () => {
    const tenant = uniqueId('t');
    const prefix = runtime.config.elasticsearch.indexPrefix;
    const old = createElasticsearchSearchIndex(runtime.es, { prefix, embedder: createHashingEmbedder({ dims: 256 }) });
    const next = createElasticsearchSearchIndex(runtime.es, { prefix, embedder: minilm });
    try {
      const record = memoryRecord(tenant, 'mem_contact', ANA.contact);
      await old.upsert(tenant, [record], { refresh: 'wait_for' });

      const refusal = await next.upsert(tenant, [memoryRecord(tenant, 'mem_home', ANA.home)]).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(SearchIndexError);
      expect(refusal).toMatchObject({ esType: 'embedder_mismatch', retryable: true });
      const probe = await next
        .probe(tenant, { vector: (await minilm.embed([ANA.contact]))[0]! })
        .catch((e: unknown) => e);
      expect(probe).toMatchObject({ esType: 'embedder_mismatch', retryable: true });

      const hits = await next.search(tenant, { text: 'Ana e-mail', k: 3, filters: {} });
      expect(hits.map((h) => h.id)).toEqual([record._id]);
      expect(hits[0]?.knnRank).toBeUndefined();
    } finally {
      await old.dropTenant(tenant);
    }
  });
});

describe('the OpenAI-compatible embeddings adapter (against a local server speaking the protocol)', () => {
  type Behaviour = 'ok' | 'shuffled' | 'slow' | 'fail' | 'short';
  let behaviour: Behaviour = 'ok';
  const seen: { authorization?: string; body: { model?: string; input?: string[] } }[] = [];
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        void (async () => {
          const body = JSON.parse(raw) as { model?: string; input?: string[] };
          seen.push({ body, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
          if (req.url !== '/v1/embeddings' || req.method !== 'POST') return res.writeHead(404).end();
          if (behaviour === 'fail') return res.writeHead(503).end('{"error":"overloaded"}');
          if (behaviour === 'slow') await new Promise((r) => setTimeout(r, 1_000));
          const vectors = await minilm.embed(body.input ?? []);
          let data = vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }));
          if (behaviour === 'shuffled') data = data.reverse();
          if (behaviour === 'short') data = data.map((d) => ({ ...d, embedding: d.embedding.slice(0, 10) }));
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ object: 'list', model: body.model, data }));
        })();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const adapter = (timeoutMs = 5_000) =>
    createOpenAiEmbedder({ url, model: 'minilm', dims: MINILM_DIMS, apiKey: 'k-test', timeoutMs, batchSize: 2 });

  it('returns the endpoint vectors in input order, in batches, with the key as a bearer token', async () => {
    const texts = [ANA.contact, ANA.bakery, '', ANA.home, 'Ben wants a single monthly invoice.'];
    for (const mode of ['ok', 'shuffled'] as const) {
      behaviour = mode;
      seen.length = 0;
      const got = await adapter().embed(texts);
      const local = await minilm.embed(texts);
      got.forEach((v, i) => expect(cosine(v, local[i]!)).toBeCloseTo(cosine(local[i]!, local[i]!), 5));
      // Empty text is never sent: the port's zero vector stands for it.
      expect(seen.flatMap((s) => s.body.input)).toEqual(texts.filter((t) => t !== ''));
      expect(seen.every((s) => s.body.input!.length <= 2 && s.authorization === 'Bearer k-test')).toBe(true);
    }
  });

  it('turns timeouts, error answers and wrong shapes into errors that name the fault and no text', async () => {
    const cases: [Behaviour, number, RegExp][] = [
      ['slow', 200, /no answer within 200 ms/],
      ['fail', 5_000, /answered 503/],
      ['short', 5_000, /data\[0\]\.embedding must be 384 numbers/],
    ];
    for (const [mode, timeoutMs, message] of cases) {
      behaviour = mode;
      const error = await adapter(timeoutMs)
        .embed([ANA.contact])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EmbeddingServiceError);
      expect(String((error as Error).message)).toMatch(message);
      expect(String((error as Error).message)).not.toContain('Ana');
    }
    const unreachable = createOpenAiEmbedder({ url: 'http://127.0.0.1:9/v1', model: 'm', dims: 3, timeoutMs: 2_000 });
    await expect(unreachable.embed(['x'])).rejects.toThrow(/unreachable/);
  });
});
