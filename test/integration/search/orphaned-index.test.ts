/**
 * A re-embedding whose old-index delete failed after the alias moved leaves an index behind no alias. Until the
 * reconcile deletes it, erasure reaches it like any other index of the tenant; the reconcile (admin, through the
 * API) finds and deletes it, and only it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { beginAndCopy } from '../../support/reembed-copy.js';
import { cliEnvironment, LETHE_BIN, listenOnRealPort, runProcess } from '../../support/cli-process.js';

let app: TestApp;
beforeAll(async () => void (app = await startTestApp()), 60_000);
afterAll(() => app?.close());

describe('an index orphaned by a re-embedding', () => {
  it('is erased like the live index until the reconcile deletes it', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `canary-${Date.now().toString(36)}`);
    const old = (await app.services.index.indexOf(tenant))!;
    const { start } = await beginAndCopy(app, tenant, 'orph1');
    // The alias moves, and the old index is not deleted: as when its delete fails after the move.
    await app.services.reembedder.swap(tenant, { ...start, previous: [] });
    expect(await app.services.index.orphans(tenant)).toEqual([old]);
    const es = app.runtime.es;
    const inOrphan = async () => {
      await es.indices.refresh({ index: old });
      const hits = await es.search({
        index: old,
        size: 100,
        _source: false,
        query: { ids: { values: graph.memories } },
      });
      return hits.hits.hits.map((h) => h._id);
    };
    expect((await inOrphan()).length).toBeGreaterThan(0);

    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    await waitForState(app, tenant, requestId, ['completed']);
    expect(await inOrphan()).toEqual([]);
    expect((await app.services.index.segmentStats(tenant)).indices).toContainEqual({
      index: old,
      role: 'orphan',
      deletedDocs: 0,
    });

    // The operator runs the reconcile from the command line (the API's `POST /index/reconcile`).
    const apiUrl = await listenOnRealPort(app);
    const token = await app.token(tenant, ['admin'], 'ops-1');
    const run = await runProcess(process.execPath, [LETHE_BIN, '--json', 'index', 'reconcile'], {
      env: { ...cliEnvironment(app, apiUrl), LETHE_TOKEN: token },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ dropped: [old] });
    expect(await es.indices.exists({ index: old })).toBe(false);
    expect(await app.services.index.indexOf(tenant)).toBe(start.target);
  }, 240_000);
});
