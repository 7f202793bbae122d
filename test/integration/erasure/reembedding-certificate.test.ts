/**
 * An erasure that runs while the tenant is being re-embedded deletes, expunges and probes the copy being filled as
 * well as the live index. Its certificate names both: one store entry per index, the index each probe ran on, and
 * an assurance claim per index that counts only the probes that ran there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ElasticsearchStoreResult } from '../../../src/governance/certificates/certificate.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { beginAndCopy } from '../../support/reembed-copy.js';

let app: TestApp;
beforeAll(async () => void (app = await startTestApp()), 60_000);
afterAll(() => app?.close());

describe('the certificate of an erasure during a re-embedding', () => {
  it("names the re-embedding's index among the stores and the index each probe ran on", async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `canary-${Date.now().toString(36)}`);
    const { acts, start } = await beginAndCopy(app, tenant, 'cert1');
    const live = (await app.services.index.indexOf(tenant))!;

    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    await waitForState(app, tenant, requestId, ['completed']);
    const [certificate] = await app.services.certificates.byRequest(tenant, requestId);

    const indices = certificate!.stores.filter((s): s is ElasticsearchStoreResult => s.store === 'elasticsearch');
    expect(indices.map((s) => s.index).sort()).toEqual([live, start.target].sort());
    const copy = indices.find((s) => s.index === start.target)!;
    expect(copy.deleted).toBeGreaterThanOrEqual(graph.memories.length);
    expect(copy.deletedDocsAfter).toBe(0);
    const byKind = new Map(certificate!.probes.filter((p) => p.target === 'elasticsearch').map((p) => [p.kind, p]));
    expect(byKind.get('id')?.indices?.sort()).toEqual([live, start.target].sort());
    expect(byKind.get('text')?.indices?.sort()).toEqual([live, start.target].sort());
    // Same model in both: vectors are probed where the live vectors are.
    expect(byKind.get('vector')?.indices).toEqual([live]);
    expect(certificate!.assurance.map((a) => a.place)).toContain(`elasticsearch:${start.target}`);
    await acts.reembedAbandon({ tenant, target: start.target });
  }, 240_000);
});
