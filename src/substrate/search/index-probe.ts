/**
 * The probe of what is left of a tenant's documents after an erasure: by id, phrase, vector, subject and content
 * hash, over every concrete index the erasure reached (a vector only where the vectors are this process's model).
 */
import type { estypes } from '@elastic/elasticsearch';
import { validationError } from '../../shared/errors.js';
import { isZeroVector } from './embedder.port.js';
import { numCandidates } from './hybrid-search.js';
import { chunks, hitIds, refresh, type SearchIndexContext } from './search-index-context.js';
import { guarded } from './search-index-error.js';
import { DEFAULT_PROBE_SIMILARITY, type ProbeRequest, type ProbeResult } from './search-index.port.js';
import { assertSameModel, erasureTargets, matchesModel } from './tenant-index.js';

/** Ids a probe checks per request, and hits a text or vector probe reports at most. */
const PROBE_LIMIT = 1000;

export async function probe(ctx: SearchIndexContext, tenant: string, request: ProbeRequest): Promise<ProbeResult> {
  const { client, embedder } = ctx;
  const ranOn = { id: [], text: [], vector: [], subject: [] };
  const empty = { found: [], byId: [], byText: [], byVector: [], bySubject: [], byContentHash: [], ranOn };
  const reached = await erasureTargets(ctx, tenant);
  if (reached.length === 0) return empty;
  const targets = reached.map((t) => t.index);
  const everywhere = targets.join(',');
  const live = reached.find((t) => t.role === 'live')?.index;
  const filling = reached.find((t) => t.role === 'reembedding')?.index;
  // Vectors compare only within one model: the live index when it is this process's model, else the copy
  // being filled with it (which is this process's by construction); no such index means wait for the swap.
  const vectorTarget = (await matchesModel(ctx, tenant)) && live ? live : (filling ?? null);
  if (request.vector && vectorTarget === null) await assertSameModel(ctx, tenant, 'probe');
  // A probe must see every write so far, not only what the last periodic refresh published.
  await refresh(ctx, everywhere, 'probe');
  const tenantFilter: estypes.QueryDslQueryContainer = { term: { tenant } };

  const byId: string[] = [];
  for (const batch of chunks([...new Set(request.ids ?? [])], PROBE_LIMIT)) {
    // mget is real-time: it sees a document even before a refresh would make it searchable.
    for (const target of targets) {
      const response = await guarded('probe', () =>
        client.mget<{ tenant?: string }>({ index: target, ids: batch, _source_includes: ['tenant'] }),
      );
      for (const doc of response.docs) {
        if ('found' in doc && doc.found && doc._source?.tenant === tenant) byId.push(doc._id);
      }
    }
  }

  const byText: string[] = [];
  const phrases = [request.text, ...(request.texts ?? [])].filter(
    (t): t is string => t !== undefined && t.trim() !== '',
  );
  // Any of the phrases, one query for all of them; a query that fills its page is split, so no hit is left out.
  const phraseHits = async (batch: string[]): Promise<void> => {
    const response = await guarded('probe', () =>
      client.search({
        index: everywhere,
        size: PROBE_LIMIT,
        _source: false,
        query: {
          bool: {
            should: batch.map((phrase) => ({ match_phrase: { content: phrase } })),
            minimum_should_match: 1,
            filter: [tenantFilter],
          },
        },
      }),
    );
    const hits = hitIds(response.hits.hits);
    if (hits.length < PROBE_LIMIT || batch.length === 1) {
      byText.push(...hits);
      return;
    }
    const half = Math.ceil(batch.length / 2);
    await phraseHits(batch.slice(0, half));
    await phraseHits(batch.slice(half));
  };
  if (phrases.length > 0) await phraseHits(phrases);

  const byVector: string[] = [];
  const vector = request.vector;
  if (vector !== undefined && !isZeroVector(vector) && vectorTarget !== null) {
    if (vector.length !== embedder.dims) throw validationError('vector', `must have ${embedder.dims} dimensions`);
    const response = await guarded('probe', () =>
      client.search({
        index: vectorTarget,
        size: PROBE_LIMIT,
        _source: false,
        knn: {
          field: 'embedding',
          query_vector: vector,
          k: PROBE_LIMIT,
          num_candidates: numCandidates(PROBE_LIMIT),
          similarity: request.similarity ?? DEFAULT_PROBE_SIMILARITY,
          filter: [tenantFilter],
        },
      }),
    );
    byVector.push(...hitIds(response.hits.hits));
  }

  const bySubject: string[] = [];
  const subjects = [...new Set(request.subjects ?? [])];
  if (subjects.length > 0) {
    const response = await guarded('probe', () =>
      client.search({
        index: everywhere,
        size: PROBE_LIMIT,
        _source: false,
        query: { bool: { filter: [tenantFilter, { terms: { subjects } }] } },
      }),
    );
    bySubject.push(...hitIds(response.hits.hits));
  }

  const byContentHash: string[] = [];
  for (const batch of chunks([...new Set(request.contentHashes ?? [])], PROBE_LIMIT)) {
    const response = await guarded('probe', () =>
      client.search({
        index: everywhere,
        size: PROBE_LIMIT,
        _source: false,
        query: { bool: { filter: [tenantFilter, { terms: { contentHash: batch } }] } },
      }),
    );
    byContentHash.push(...hitIds(response.hits.hits));
  }

  const unique = (ids: string[]) => [...new Set(ids)];
  const found = unique([...byId, ...byText, ...byVector, ...bySubject, ...byContentHash]);
  return {
    found,
    byId: unique(byId),
    byText: unique(byText),
    byVector,
    bySubject: unique(bySubject),
    byContentHash: unique(byContentHash),
    ranOn: {
      id: request.ids?.length ? targets : [],
      text: phrases.length > 0 ? targets : [],
      vector: vector !== undefined && !isZeroVector(vector) && vectorTarget !== null ? [vectorTarget] : [],
      subject: subjects.length > 0 ? targets : [],
    },
  };
}
