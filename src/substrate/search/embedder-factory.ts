/** The embedder the configuration names; the one place a deployment's choice becomes an adapter. */
import type { EmbedderConfig } from '../../config/config.js';
import type { Embedder } from './embedder.port.js';
import { createHashingEmbedder } from './hashing-embedder.js';
import { createMinilmEmbedder } from './minilm-embedder.js';
import { createOpenAiEmbedder } from './openai-embedder.js';

export function createEmbedder(config: EmbedderConfig): Embedder {
  switch (config.kind) {
    case 'hashing':
      return createHashingEmbedder({ dims: config.dims });
    case 'minilm':
      return createMinilmEmbedder({ modelDir: config.modelDir, threads: config.threads });
    case 'openai':
      return createOpenAiEmbedder(config);
  }
}
