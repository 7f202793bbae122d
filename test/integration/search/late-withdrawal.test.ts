/**
 * An index write that lands after a whole erasure (marked, purged, expunged, verified, certified) is withdrawn by
 * its second look at the store. The withdrawal must also expunge: otherwise the withdrawn document, content
 * included, stays in the segments as a deleted document until the tenant's next erasure. Both writers that
 * withdraw late are tried: the write path's `indexUnlessErased` and a re-embedding's copy page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReembedActivities, type ReembedPage } from '../../../activities/reembed.activities.js';
import type { MemoryStore } from '../../../src/substrate/memories/memory-store.js';
import { indexUnlessErased } from '../../../src/substrate/search/index-unless-erased.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState } from '../../support/erasure-fixture.js';

let app: TestApp;
beforeAll(async () => void (app = await startTestApp()), 60_000);
afterAll(() => app?.close());

/** The memory store, with a whole erasure of the subject run right after the first read of a graph record. */
function erasingAfterFirstRead(tenant: string, subject: string, watched: readonly string[]) {
  const real = app.services.memories;
  const state = { requestId: null as string | null };
  const memories: MemoryStore = {
    ...real,
    async getMany(t, ids) {
      const read = await real.getMany(t, ids);
      if (state.requestId === null && ids.some((id) => watched.includes(id))) {
        state.requestId = await fileErasure(app, tenant, { subjectId: subject });
        await waitForState(app, tenant, state.requestId, ['completed']);
      }
      return read;
    },
    async pageOfTenant(t, after, size) {
      const page = await real.pageOfTenant(t, after, size);
      if (state.requestId === null && page.some((r) => watched.includes(r._id))) {
        state.requestId = await fileErasure(app, tenant, { subjectId: subject });
        await waitForState(app, tenant, state.requestId, ['completed']);
      }
      return page;
    },
  };
  return { memories, state };
}

describe('a write withdrawn after a whole erasure', () => {
  it('leaves no deleted document in the segments when the write path indexes an erased record', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `canary-${Date.now().toString(36)}`);
    const { memories, state } = erasingAfterFirstRead(tenant, graph.subject, graph.memories);

    const result = await indexUnlessErased(app.services.index, memories, tenant, graph.memories);

    expect(state.requestId).not.toBeNull();
    expect(result.withdrawn).toBeGreaterThanOrEqual(1);
    expect((await app.services.index.probe(tenant, { ids: graph.memories })).found).toEqual([]);
    // Read as it is (no merge): the withdrawal itself expunged.
    expect((await app.services.index.segmentStats(tenant)).deletedDocs).toBe(0);
  }, 240_000);

  it("leaves no deleted document in the segments when a re-embedding's copy page writes an erased record", async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `canary-${Date.now().toString(36)}`);
    const { memories, state } = erasingAfterFirstRead(tenant, graph.subject, graph.memories);
    const acts = createReembedActivities({
      memories,
      index: app.services.index,
      reembedder: app.services.reembedder,
      audit: app.services.audit,
    });

    const start = await acts.reembedBegin({ tenant, generation: 'late1' });
    let withdrawn = 0;
    for (let after: string | null = null; ;) {
      const page: ReembedPage = await acts.reembedCopyPage({ tenant, after, pageSize: 100 });
      withdrawn += page.withdrawn;
      if (page.done) break;
      after = page.last;
    }

    expect(state.requestId).not.toBeNull();
    expect(withdrawn).toBeGreaterThanOrEqual(1);
    const stats = await app.services.index.segmentStats(tenant);
    expect(stats.indices.map((i) => i.index)).toContain(start.target);
    expect(stats.deletedDocs).toBe(0);
    await acts.reembedAbandon({ tenant, target: start.target });
  }, 240_000);
});
