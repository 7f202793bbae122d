/**
 * An embedder over an OpenAI-compatible `POST /v1/embeddings` endpoint, for deployments that run one.
 * Texts go out in batches; vectors come back by `index`. Every failure (timeout, refused connection,
 * non-2xx answer, malformed body, wrong length) is an `EmbeddingServiceError` naming what went wrong and
 * never the texts, so the activity that called it retries and no content reaches a log.
 */
import type { Embedder } from './embedder.port.js';

export interface OpenAiEmbedderOptions {
  /** Base URL up to and excluding `/embeddings`, e.g. `http://127.0.0.1:8000/v1`. */
  url: string;
  model: string;
  dims: number;
  apiKey?: string;
  timeoutMs: number;
  /** Inputs per request. */
  batchSize?: number;
}

export class EmbeddingServiceError extends Error {
  constructor(
    message: string,
    /** HTTP status when the endpoint answered, else null. */
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'EmbeddingServiceError';
  }
}

interface EmbeddingsBody {
  data?: unknown;
}

export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const endpoint = `${options.url.replace(/(?<!\/)\/+$/, '')}/embeddings`;
  const batchSize = options.batchSize ?? 64;

  async function request(input: string[]): Promise<number[][]> {
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: options.model, input, encoding_format: 'float' }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const name = (error as Error).name;
      const why = name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : 'the endpoint is unreachable';
      throw new EmbeddingServiceError(`embeddings endpoint: ${why}`, null);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new EmbeddingServiceError(`embeddings endpoint answered ${response.status}`, response.status);
    }
    let body: EmbeddingsBody;
    try {
      body = (await response.json()) as EmbeddingsBody;
    } catch {
      throw new EmbeddingServiceError('embeddings endpoint: the answer is not JSON', response.status);
    }
    return vectorsOf(body, input.length, options.dims, response.status);
  }

  return {
    dims: options.dims,
    model: `openai-compatible:${options.model}`,
    async embed(texts) {
      const vectors: number[][] = [];
      for (let at = 0; at < texts.length; at += batchSize) {
        const slice = texts.slice(at, at + batchSize);
        // The endpoint refuses empty strings; the port asks for the zero vector there anyway.
        const live = slice.map((text, i) => ({ text, i })).filter(({ text }) => text.trim() !== '');
        const out: number[][] = slice.map(() => new Array<number>(options.dims).fill(0));
        if (live.length > 0) {
          const got = await request(live.map(({ text }) => text));
          live.forEach(({ i }, j) => (out[i] = got[j]!));
        }
        vectors.push(...out);
      }
      return vectors;
    },
  };
}

/** `data[]` ordered by its `index` field, each a finite vector of the configured length. */
function vectorsOf(body: EmbeddingsBody, expected: number, dims: number, status: number): number[][] {
  if (!Array.isArray(body.data) || body.data.length !== expected) {
    throw new EmbeddingServiceError(`embeddings endpoint: expected ${expected} embeddings in data`, status);
  }
  const out: (number[] | undefined)[] = new Array(expected);
  for (const item of body.data as { index?: unknown; embedding?: unknown }[]) {
    const index = item?.index;
    const embedding = item?.embedding;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected || out[index]) {
      throw new EmbeddingServiceError('embeddings endpoint: data[].index is missing, repeated or out of range', status);
    }
    if (
      !Array.isArray(embedding) ||
      embedding.length !== dims ||
      !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))
    ) {
      throw new EmbeddingServiceError(`embeddings endpoint: data[${index}].embedding must be ${dims} numbers`, status);
    }
    out[index] = embedding as number[];
  }
  return out as number[][];
}
