/**
 * Re-embedding a tenant's index with another model, on the real stack: an app embedding with the hashing
 * stand-in (the old model) wrote the tenant; an app with the MiniLM model re-embeds it through the workflow.
 * The guarantees: search keeps answering, every live record is in the new index, writes of both models during
 * the copy survive the swap, and an erasure that runs during the copy leaves nothing in any index — even when
 * it lands between a copy page's read and its write.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReembedActivities, type ReembedPage } from '../../../activities/reembed.activities.js';
import { tenantIndexNames } from '../../../src/substrate/search/index-layout.js';
import { MINILM_MODEL_ID } from '../../../src/substrate/search/minilm-embedder.js';
import type { Reembedder } from '../../../src/substrate/search/elasticsearch-reembedder.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

let hashingApp: TestApp;
let minilmApp: TestApp;

beforeAll(async () => {
  [hashingApp, minilmApp] = await Promise.all([startTestApp(), startTestApp({ config: { LETHE_EMBEDDER: 'minilm' } })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([hashingApp?.close(), minilmApp?.close()]);
});

async function writeMemories(app: TestApp, tenant: string, contents: string[]): Promise<string[]> {
  const response = await app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/batches`,
    token: await app.token(tenant, ['agent'], 'agent-7'),
    payload: {
      events: contents.map((content) => sampleEvent({ subjects: ['subject-filler'], content })),
      memories: contents.map((content, i) =>
        sampleMemory({
          subjects: ['subject-filler'],
          // Distinct attributes: notes that do not contradict one another (no disputes to wait for).
          attribute: `note-${randomUUID().slice(0, 8)}`,
          content,
          provenance: { eventIds: [`#${i}`], parentIds: [], derivationRule: 'note' },
        }),
      ),
    },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ memories: { id: string }[] }>().memories.map((m) => m.id);
}

/** Every document id of the tenant in every index that carries its name (live, copy, or left behind). */
async function documentsEverywhere(app: TestApp, tenant: string): Promise<{ ids: string[]; indices: string[] }> {
  const { alias } = tenantIndexNames(app.runtime.config.elasticsearch.indexPrefix, tenant);
  const es = app.runtime.es;
  const listed = await es.cat.indices({ index: `${alias}*`, format: 'json', h: ['index'] });
  const indices = listed
    .map((i) => String(i.index))
    .filter((name) => name === `${alias}-v1` || name.startsWith(`${alias}.`));
  if (indices.length === 0) return { ids: [], indices };
  await es.indices.refresh({ index: indices.join(',') });
  const response = await es.search({ index: indices.join(','), size: 1000, _source: false, query: { match_all: {} } });
  return { ids: response.hits.hits.map((h) => h._id!).sort(), indices: indices.sort() };
}

async function liveRecordIds(app: TestApp, tenant: string): Promise<string[]> {
  const all = await app.services.memories.pageOfTenant(tenant, null, 1000);
  return all
    .filter((r) => r.status !== 'deleted' && r.status !== 'purged')
    .map((r) => r._id)
    .sort();
}

describe('re-embedding a tenant', () => {
  it('moves the tenant to the new model through the API, with progress, and search keeps answering', async () => {
    const tenant = uniqueTenant();
    await writeMemories(hashingApp, tenant, [
      'Ana prefers e-mail; no phone calls before noon.',
      "Ana's bakery may upgrade to the premium plan; decision in November.",
      ...Array.from({ length: 12 }, (_, i) => `Filler note ${i} about an unrelated invoice.`),
    ]);
    const admin = await minilmApp.token(tenant, ['admin'], 'ops-1');
    const agent = await minilmApp.token(tenant, ['agent'], 'agent-7');

    // Before: the new-model process answers from BM25 alone (the index holds the old model's vectors).
    const before = await minilmApp.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token: agent,
      payload: { query: 'how can we reach Ana?', k: 3 },
    });
    expect(before.statusCode, before.body).toBe(200);

    const started = await minilmApp.request({ method: 'POST', url: `/v1/tenants/${tenant}/reembed`, token: admin });
    expect(started.statusCode, started.body).toBe(202);
    const again = await minilmApp.request({ method: 'POST', url: `/v1/tenants/${tenant}/reembed`, token: admin });
    expect([200, 202]).toContain(again.statusCode);

    let status: { state: string; progress: { phase: string; copied: number; model: string } | null };
    for (const deadline = Date.now() + 120_000; ;) {
      status = (await minilmApp.request({ method: 'GET', url: `/v1/tenants/${tenant}/reembed`, token: admin })).json();
      if (status.state !== 'running' || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(status.state).toBe('completed');
    expect(status.progress).toMatchObject({ phase: 'done', copied: 14, model: MINILM_MODEL_ID });

    const { alias } = tenantIndexNames(minilmApp.runtime.config.elasticsearch.indexPrefix, tenant);
    const behind = Object.keys(await minilmApp.runtime.es.indices.getAlias({ name: alias }));
    expect(behind).toHaveLength(1);
    expect(behind[0]).toMatch(/\.e\d{14}$/);
    const everywhere = await documentsEverywhere(minilmApp, tenant);
    expect(everywhere.indices).toEqual(behind);
    expect(everywhere.ids).toEqual(await liveRecordIds(minilmApp, tenant));

    const after = await minilmApp.services.index.search(tenant, { text: 'how can we reach Ana?', k: 3, filters: {} });
    expect(after.some((h) => h.knnRank !== undefined)).toBe(true);

    let audited = 0;
    for await (const entry of minilmApp.services.audit.entries(tenant))
      if (entry.action === 'index.reembedded') audited++;
    expect(audited).toBe(1);

    const foreign = await minilmApp.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/reembed`,
      token: await minilmApp.token(tenant, ['dpo'], 'dpo-1'),
    });
    expect(foreign.statusCode).toBe(403);
  }, 180_000);

  it('leaves no erased record in any index when an erasure lands inside a copy page, and keeps writes of both models', async () => {
    const tenant = uniqueTenant();
    const canary = `canary-${Date.now().toString(36)}`;
    const graph = await buildSubjectGraph(hashingApp, tenant, canary);
    await writeMemories(
      hashingApp,
      tenant,
      Array.from({ length: 9 }, (_, i) => `Unrelated note number ${i}.`),
    );

    // The erasure runs the moment the copy has read the page holding the subject's first memory, before the copy
    // writes it: the worst interleaving for a copy (its read is stale when it writes).
    let erasureId: string | null = null;
    const real = minilmApp.services.reembedder;
    const racing: Reembedder = {
      ...real,
      async copy(t, records) {
        if (erasureId === null && records.some((r) => graph.memories.includes(r._id))) {
          erasureId = await fileErasure(hashingApp, tenant, { subjectId: graph.subject });
          await waitForState(hashingApp, tenant, erasureId, ['completed']);
        }
        return real.copy(t, records);
      },
    };
    const acts = createReembedActivities({
      memories: minilmApp.services.memories,
      index: minilmApp.services.index,
      reembedder: racing,
      audit: minilmApp.services.audit,
    });

    const since = new Date().toISOString();
    const start = await acts.reembedBegin({ tenant, generation: 'race1' });
    let after: string | null = null;
    let withdrawn = 0;
    let written: string[] = [];
    for (let n = 0; ; n++) {
      const page: ReembedPage = await acts.reembedCopyPage({ tenant, after, pageSize: 3 });
      withdrawn += page.withdrawn;
      if (n === 1) {
        // Writes during the copy: one from a process of the new model (goes to the copy), one of the old (the live index).
        written = [
          ...(await writeMemories(minilmApp, tenant, ['Written by the new model during the copy.'])),
          ...(await writeMemories(hashingApp, tenant, ['Written by the old model during the copy.'])),
        ];
      }
      if (page.done) break;
      after = page.last;
    }
    expect(erasureId).not.toBeNull();
    await acts.reembedSwap({ tenant, start, workflowId: 'test-reembed', copied: 0 });
    for (let a: string | null = null; ;) {
      const page: ReembedPage = await acts.reembedCatchUpPage({ tenant, since, after: a, pageSize: 3 });
      if (page.done) break;
      a = page.last;
    }
    for (let a: string | null = null; ;) {
      const page: ReembedPage = await acts.reembedReconcilePage({ tenant, after: a, pageSize: 3 });
      withdrawn += page.withdrawn;
      if (page.done) break;
      a = page.last;
    }

    const everywhere = await documentsEverywhere(minilmApp, tenant);
    // Only the new index is left, and it holds exactly the records that are live in the store.
    expect(everywhere.indices).toEqual([start.target]);
    const live = await liveRecordIds(minilmApp, tenant);
    expect(everywhere.ids).toEqual(live);
    for (const id of [...graph.memories, graph.collateral]) expect(everywhere.ids).not.toContain(id);
    for (const id of written) expect(everywhere.ids).toContain(id);
    const byText = await minilmApp.services.index.probe(tenant, { text: canary, subjects: [graph.subject] });
    expect(byText.found).toEqual([]);
    // The erasure's own verification ran during the copy and found nothing either.
    const request = await hashingApp.services.erasureRequests.get(tenant, erasureId!);
    expect(request?.state).toBe('completed');
    // The stale page's copies of the erased records were written, seen by the second look, and withdrawn.
    expect(withdrawn).toBeGreaterThanOrEqual(1);
  }, 240_000);
});
