/**
 * The embedders side by side (`npm run bench:embeddings`): setup time of the local model (fetch into an empty
 * cache, first load), embeddings per second one text at a time and in batches, and retrieval of paraphrased
 * questions on the real index: BM25, dense and hybrid (RRF) with the hashing stand-in and with MiniLM, over
 * the same records. Sizes: BENCH_PEOPLE (default 200 people × 10 facts), BENCH_THROUGHPUT (default 512 texts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createRuntime } from '../app/runtime.js';
import { loadConfig } from '../src/config/load-config.js';
import type { Embedder } from '../src/substrate/search/embedder.port.js';
import { createElasticsearchSearchIndex } from '../src/substrate/search/elasticsearch-search-index.js';
import { createHashingEmbedder } from '../src/substrate/search/hashing-embedder.js';
import { createMinilmEmbedder } from '../src/substrate/search/minilm-embedder.js';
import type { SearchHit, SearchIndex } from '../src/substrate/search/search-index.port.js';
import { paraphraseDataset, type ParaphraseQuery } from './lib/paraphrase-dataset.js';
import { memoryRecordFor } from './lib/bench-records.js';
import { benchName, runBench } from './lib/bench-run.js';

const PEOPLE = Number(process.env.BENCH_PEOPLE ?? 200);
const THROUGHPUT = Number(process.env.BENCH_THROUGHPUT ?? 512);
const K = 10;
const repoDir = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function seconds(fromMs: number): number {
  return (performance.now() - fromMs) / 1000;
}

/** Fetches the model into an empty cache: what a fresh machine's first `npm run stack:up` pays. */
function coldFetch(): { seconds: number; dir: string } {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-model-bench-'));
  const started = performance.now();
  const dir = execFileSync('bash', [path.join(repoDir, 'stack', 'embedding-model', 'fetch.sh')], {
    env: { ...process.env, LETHE_CACHE_DIR: cache },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .toString()
    .trim()
    .split('\n')
    .pop()!;
  return { seconds: seconds(started), dir };
}

async function throughput(embedder: Embedder, texts: string[]): Promise<{ single: number; batched: number }> {
  let started = performance.now();
  for (const text of texts.slice(0, Math.min(128, texts.length))) await embedder.embed([text]);
  const single = Math.min(128, texts.length) / seconds(started);
  started = performance.now();
  await embedder.embed(texts);
  return { single, batched: texts.length / seconds(started) };
}

interface Ranks {
  bm25: number[];
  dense: number[];
  hybrid: number[];
}

/** The answer's rank (1-based, Infinity when absent) in each list of one hybrid search. */
function ranksOf(hits: SearchHit[], answer: string): { bm25: number; dense: number; hybrid: number } {
  const at = hits.findIndex((h) => h.id === answer);
  const hit = hits[at];
  return {
    hybrid: at === -1 ? Infinity : at + 1,
    bm25: hit?.bm25Rank ?? Infinity,
    dense: hit?.knnRank ?? Infinity,
  };
}

async function evaluate(index: SearchIndex, tenant: string, queries: ParaphraseQuery[]): Promise<Ranks> {
  const ranks: Ranks = { bm25: [], dense: [], hybrid: [] };
  for (const q of queries) {
    // k = 50 so each half's own ranks are visible down to 10 in the fused answer (each half fetches 2k).
    const hits = await index.search(tenant, { text: q.text, k: 50, filters: {} });
    const r = ranksOf(hits, q.answer);
    ranks.bm25.push(r.bm25);
    ranks.dense.push(r.dense);
    ranks.hybrid.push(r.hybrid);
  }
  return ranks;
}

function recall(ranks: number[], k: number): number {
  return ranks.filter((r) => r <= k).length / ranks.length;
}

function mrr(ranks: number[]): number {
  return ranks.reduce((s, r) => s + (r <= K ? 1 / r : 0), 0) / ranks.length;
}

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, LETHE_ENV: 'development', LOG_LEVEL: 'warn' });
  if (config.embedder.kind !== 'minilm') throw new Error('bench:embeddings compares against the minilm embedder');
  const runtime = createRuntime(config, 'lethe-bench');
  const { facts, queries } = paraphraseDataset(PEOPLE);

  const fetched = coldFetch();
  fs.rmSync(path.dirname(path.dirname(fetched.dir)), { recursive: true, force: true });
  const minilm = createMinilmEmbedder({ modelDir: config.embedder.modelDir, threads: config.embedder.threads });
  let started = performance.now();
  await minilm.embed(['warm up']);
  const firstLoad = seconds(started);
  const hashing = createHashingEmbedder({ dims: 256 });
  const texts = facts.slice(0, THROUGHPUT).map((f) => f.content);
  const speed = { minilm: await throughput(minilm, texts), hashing: await throughput(hashing, texts) };

  const prefix = config.elasticsearch.indexPrefix;
  const setups = [
    { name: 'hashing', embedder: hashing },
    { name: 'minilm', embedder: minilm },
  ];
  const results: Record<string, { ranks: Ranks; indexSeconds: number }> = {};
  const tenants: [SearchIndex, string][] = [];
  try {
    for (const setup of setups) {
      const tenant = benchName(`emb-${randomUUID().slice(0, 8)}`);
      const index = createElasticsearchSearchIndex(runtime.es, { prefix, embedder: setup.embedder });
      tenants.push([index, tenant]);
      started = performance.now();
      const records = facts.map((f) => memoryRecordFor(tenant, f.id, f.content, [f.person]));
      for (let at = 0; at < records.length; at += 500) {
        await index.upsert(tenant, records.slice(at, at + 500), {
          refresh: at + 500 >= records.length ? 'wait_for' : false,
        });
      }
      const indexSeconds = seconds(started);
      results[setup.name] = { ranks: await evaluate(index, tenant, queries), indexSeconds };
    }
  } finally {
    for (const [index, tenant] of tenants) await index.dropTenant(tenant).catch(() => undefined);
    await runtime.close();
  }

  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  out('# Embeddings benchmark');
  out();
  out(
    `${facts.length} facts of ${PEOPLE} people, ${queries.length} paraphrased questions (one per fact); load ${load}.`,
  );
  out();
  out('| setup | value |');
  out('| --- | ---: |');
  out(`| model fetch into an empty cache (PyPI, 2 wheels, sha256-checked) | ${fetched.seconds.toFixed(1)} s |`);
  out(`| first load of the ONNX session + first embedding | ${firstLoad.toFixed(2)} s |`);
  out(`| MiniLM embeddings/s, one text per call (128 texts) | ${speed.minilm.single.toFixed(0)} |`);
  out(`| MiniLM embeddings/s, batches of 32 (${texts.length} texts) | ${speed.minilm.batched.toFixed(0)} |`);
  out(`| hashing embeddings/s, batched | ${speed.hashing.batched.toFixed(0)} |`);
  out(
    `| index ${facts.length} facts with hashing / with MiniLM | ${results.hashing!.indexSeconds.toFixed(1)} s / ${results.minilm!.indexSeconds.toFixed(1)} s |`,
  );
  out();
  out('| route | recall@1 | recall@5 | recall@10 | MRR@10 |');
  out('| --- | ---: | ---: | ---: | ---: |');
  const rows: [string, number[]][] = [
    ['BM25', results.minilm!.ranks.bm25],
    ['dense, hashing stand-in', results.hashing!.ranks.dense],
    ['dense, MiniLM', results.minilm!.ranks.dense],
    ['hybrid RRF, hashing stand-in', results.hashing!.ranks.hybrid],
    ['hybrid RRF, MiniLM', results.minilm!.ranks.hybrid],
  ];
  for (const [name, ranks] of rows) {
    out(
      `| ${name} | ${recall(ranks, 1).toFixed(3)} | ${recall(ranks, 5).toFixed(3)} | ${recall(ranks, 10).toFixed(3)} | ${mrr(ranks).toFixed(3)} |`,
    );
  }
  const bm25 = recall(results.minilm!.ranks.bm25, 1);
  const dense = recall(results.minilm!.ranks.dense, 1);
  out();
  out(`dense MiniLM / BM25 recall@1: ${(dense / Math.max(bm25, 1e-9)).toFixed(2)}×`);
}

await runBench(main);
