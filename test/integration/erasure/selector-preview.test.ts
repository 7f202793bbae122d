/**
 * A DPO looks before filing: for a selector, the preview shows what a request would reach if filed now — located
 * records, the lineage closure (collateral included), what holds keep, and which principals have read them — as
 * ids and counts. It changes nothing: no fence goes up, so a write about the subject is still admitted, and the
 * request filed afterwards reaches exactly what the preview showed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, searchAsWriter, waitForState } from '../../support/erasure-fixture.js';
import { cliEnvironment, LETHE_BIN, listenOnRealPort, runProcess } from '../../support/cli-process.js';
import { sampleEvent } from '../../support/samples.js';

interface Preview {
  located: { events: number; memories: number };
  derived: { total: number; collateral: number };
  memoriesByStatus: Record<string, number>;
  events: number;
  held: { records: number; holdIds: string[] };
  readers: { principal: string; retrievals: number; prompts: number }[];
  ids: { located: string[]; derived: string[]; held: string[]; truncated: boolean };
}

describe("a DPO's preview of a selector before filing", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  const preview = async (tenant: string, selector: object, roles: ('dpo' | 'agent')[] = ['dpo']) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/subject-rights/preview`,
      token: await app.token(tenant, roles, 'dpo-1'),
      payload: { selector },
    });

  it('shows what the request then reaches, holds and readers included, and fences nothing', async () => {
    const tenant = uniqueTenant();
    const canary = `canary-${randomUUID()}`;
    const graph = await buildSubjectGraph(app, tenant, canary);
    // The graph's writer reads the subject's records (a search is traced like a retrieval).
    expect(await searchAsWriter(app, graph, canary)).toEqual(expect.arrayContaining(graph.memories.slice(0, 2)));
    // Counsel holds one of the derived records.
    const held = graph.memories[3]!;
    const placed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds`,
      token: await app.token(tenant, ['legal'], 'counsel-1'),
      payload: { scope: { recordIds: [held] }, caseRef: 'case-2026-077' },
    });
    expect(placed.statusCode, placed.body).toBe(201);

    const first = await preview(tenant, { subjectId: graph.subject });
    expect(first.statusCode, first.body).toBe(200);
    const seen = first.json<Preview>();
    expect(seen).toMatchObject({
      located: { events: 2, memories: 3 },
      derived: { total: 2, collateral: 2 },
      memoriesByStatus: { active: 5 },
      events: 2,
      held: { records: 1, holdIds: [placed.json<{ id: string }>().id] },
      readers: [{ principal: graph.writer, retrievals: 1, prompts: 0 }],
    });
    expect(seen.ids.held).toEqual([held]);
    expect([...seen.ids.located, ...seen.ids.derived].sort()).toEqual(
      [...graph.events, ...graph.memories, graph.collateral].sort(),
    );
    // Ids and counts: neither the content nor the subject is in the answer.
    expect(first.body).not.toContain(canary);
    expect(first.body).not.toContain(graph.subject);

    // Nothing was fenced: a write about the subject is still admitted, and the next preview counts it.
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/events`,
      token: await app.token(tenant, ['agent'], graph.writer),
      payload: sampleEvent({ subjects: [graph.subject], content: 'Ana called about her delivery window.' }),
    });
    expect(written.statusCode, written.body).toBe(201);
    const second = (await preview(tenant, { subjectId: graph.subject })).json<Preview>();
    expect(second.located).toEqual({ events: 3, memories: 3 });

    // The request filed next reaches what the preview showed.
    const requestId = await fileErasure(app, tenant, { subjectId: graph.subject });
    const request = await waitForState(app, tenant, requestId, ['partial', 'needs-dpo', 'completed']);
    expect(request.counts).toMatchObject({
      located: second.located.events + second.located.memories,
      derived: second.derived.total,
      collateral: second.derived.collateral,
    });
    expect(request.holdIds).toEqual(second.held.holdIds);
  }, 240_000);

  it('is for those who may file: an agent is refused, and a bad selector is named', async () => {
    const tenant = uniqueTenant();
    const agent = await preview(tenant, { subjectId: 'anyone' }, ['agent']);
    expect(agent.statusCode).toBe(403);
    const bad = await preview(tenant, { subjectId: 'a', memoryIds: ['m'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { field: string } }>().error.field).toMatch(/^selector/);
  });

  it('runs as `lethe erasure preview --subject`', async () => {
    const tenant = uniqueTenant();
    const graph = await buildSubjectGraph(app, tenant, `canary-${randomUUID()}`);
    const apiUrl = await listenOnRealPort(app);
    const run = await runProcess(
      process.execPath,
      [LETHE_BIN, '--json', 'erasure', 'preview', '--subject', graph.subject],
      { env: { ...cliEnvironment(app, apiUrl), LETHE_TOKEN: await app.token(tenant, ['dpo'], 'dpo-1') } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ located: { events: 2, memories: 3 }, derived: { total: 2 } });
    const none = await runProcess(process.execPath, [LETHE_BIN, 'erasure', 'preview'], {
      env: { ...cliEnvironment(app, apiUrl), LETHE_TOKEN: await app.token(tenant, ['dpo'], 'dpo-1') },
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('selector: give exactly one of');
  }, 120_000);
});
