import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@elastic/elasticsearch';
import { testConfig, uniqueId } from '../../support/harness.js';

describe('Elasticsearch node', () => {
  let es: Client;
  const index = uniqueId('stackcheck');
  beforeAll(async () => {
    es = new Client({ node: testConfig().elasticsearch.url });
    await es.indices.create({
      index,
      mappings: {
        properties: {
          text: { type: 'text' },
          tag: { type: 'keyword' },
          vector: { type: 'dense_vector', dims: 3, index: true, similarity: 'cosine' },
        },
      },
    });
    await es.bulk({
      refresh: true,
      operations: [
        { index: { _index: index, _id: '1' } },
        { text: 'the quick brown fox', tag: 'a', vector: [1, 0, 0] },
        { index: { _index: index, _id: '2' } },
        { text: 'a lazy brown dog', tag: 'b', vector: [0, 1, 0] },
        { index: { _index: index, _id: '3' } },
        { text: 'quick thinking', tag: 'b', vector: [0.9, 0.1, 0] },
      ],
    });
  });
  afterAll(async () => {
    await es?.indices.delete({ index }, { ignore: [404] });
    await es?.close();
  });

  it('answers a BM25 query', async () => {
    const result = await es.search({ index, query: { match: { text: 'quick fox' } } });
    expect(result.hits.hits[0]?._id).toBe('1');
  });

  it('answers a kNN query with the filter applied inside the search', async () => {
    const result = await es.search({
      index,
      knn: { field: 'vector', query_vector: [1, 0, 0], k: 1, num_candidates: 10, filter: { term: { tag: 'b' } } },
    });
    expect(result.hits.hits.map((h) => h._id)).toEqual(['3']);
  });
});
