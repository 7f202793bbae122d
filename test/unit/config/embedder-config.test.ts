import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { envRefusal, minimalEnv } from '../../support/config-refusal.js';

const base = minimalEnv;
const refusal = envRefusal;

describe('embedder configuration', () => {
  it('uses the local model outside tests and the hashing stand-in in tests', () => {
    const { LETHE_TOKEN_SECRET: _development, ...productionBase } = base;
    expect(parseConfig({ ...productionBase, LETHE_ENV: 'production' }).embedder).toEqual({
      kind: 'minilm',
      modelDir: '/models/minilm',
      threads: 1,
    });
    expect(parseConfig({ ...base }).embedder.kind).toBe('minilm');
    expect(parseConfig({ ...base, LETHE_ENV: 'test' }).embedder).toEqual({ kind: 'hashing', dims: 256 });
    expect(parseConfig({ ...base, LETHE_ENV: 'test', LETHE_EMBEDDER: 'minilm' }).embedder.kind).toBe('minilm');
  });

  it('takes an OpenAI-compatible endpoint with its model and vector length', () => {
    const config = parseConfig({
      ...base,
      LETHE_EMBEDDER: 'openai',
      LETHE_EMBEDDINGS_URL: 'http://10.0.0.5:8000/v1',
      LETHE_EMBEDDINGS_MODEL: 'bge-small',
      LETHE_EMBEDDING_DIMS: '384',
      LETHE_EMBEDDINGS_API_KEY: 'k',
    });
    expect(config.embedder).toEqual({
      kind: 'openai',
      url: 'http://10.0.0.5:8000/v1',
      model: 'bge-small',
      dims: 384,
      apiKey: 'k',
      timeoutMs: 30_000,
    });
  });

  it('names the variable that is missing or wrong', () => {
    expect(refusal({ LETHE_EMBEDDER: 'openai' }).variable).toBe('LETHE_EMBEDDINGS_URL');
    expect(refusal({ LETHE_EMBEDDER: 'openai', LETHE_EMBEDDINGS_URL: 'http://h/v1' }).variable).toBe(
      'LETHE_EMBEDDINGS_MODEL',
    );
    expect(
      refusal({ LETHE_EMBEDDER: 'openai', LETHE_EMBEDDINGS_URL: 'http://h/v1', LETHE_EMBEDDINGS_MODEL: 'm' }).variable,
    ).toBe('LETHE_EMBEDDING_DIMS');
    expect(refusal({ LETHE_EMBEDDER: 'minilm', LETHE_EMBEDDING_DIMS: '256' }).variable).toBe('LETHE_EMBEDDING_DIMS');
    expect(refusal({ LETHE_EMBEDDER: 'bert' }).variable).toBe('LETHE_EMBEDDER');
    expect(refusal({ LETHE_EMBEDDER: 'openai', LETHE_EMBEDDINGS_URL: 'not a url' }).variable).toBe(
      'LETHE_EMBEDDINGS_URL',
    );
  });
});
