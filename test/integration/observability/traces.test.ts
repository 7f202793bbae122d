/**
 * One trace from the API call through the workflow it starts to that workflow's activities: the request's server
 * span is the ancestor of the client's StartWorkflow span, the workflow's RunWorkflow span, and every RunActivity
 * span of the erasure. Spans are read back from an in-process exporter; they carry route patterns, type names and
 * ids, never the subject or the content.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, completeErasure, type SubjectGraph } from '../../support/erasure-fixture.js';

describe('a trace across the API, the workflow and its activities', () => {
  const exporter = new InMemorySpanExporter();
  let app: TestApp;
  let graph: SubjectGraph;
  let requestId: string;

  beforeAll(async () => {
    app = await startTestApp({ spanExporter: exporter });
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    exporter.reset();
    const filed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/erasure-requests`,
      token: await app.token(graph.tenant, ['dpo'], 'dpo-1'),
      payload: { selector: { subjectId: graph.subject }, legalGround: 'art17-1a' },
    });
    expect(filed.statusCode, filed.body).toBe(202);
    requestId = filed.json<{ id: string }>().id;
    expect((await completeErasure(app, graph.tenant, requestId, 'extend')).state).toBe('completed');
    // The workflow's own span ends when the workflow does, after the DPO is told: bounded by the hook's timeout.
    while (!exporter.getFinishedSpans().some((s) => s.name === 'RunWorkflow:erasureRequest'))
      await new Promise((resolve) => setTimeout(resolve, 100));
  }, 240_000);
  afterAll(async () => {
    await app?.close();
  });

  /** The filing request's trace: every span that shares its server span's trace id. */
  function filingTrace(): { root: ReadableSpan; spans: ReadableSpan[] } {
    const all = exporter.getFinishedSpans();
    const root = all.find((s) => s.name === 'POST /v1/tenants/:tenant/erasure-requests');
    expect(root, all.map((s) => s.name).join(', ')).toBeDefined();
    return { root: root!, spans: all.filter((s) => s.spanContext().traceId === root!.spanContext().traceId) };
  }

  it('holds the client call, the workflow run and the erasure steps under the request span', () => {
    const { root, spans } = filingTrace();
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes['http.response.status_code']).toBe(202);
    const names = new Set(spans.map((s) => s.name));
    expect(names).toContain('StartWorkflow:erasureRequest');
    expect(names).toContain('RunWorkflow:erasureRequest');
    for (const step of ['locateTargets', 'computeClosure', 'purgeRecords', 'verifyErasure', 'issueCertificate'])
      expect(names).toContain(`RunActivity:${step}`);
    // Each span's parent is in the same trace: one tree, rooted at the request.
    const ids = new Set(spans.map((s) => s.spanContext().spanId));
    for (const span of spans) if (span !== root) expect(ids.has(span.parentSpanId!), span.name).toBe(true);
  });

  it('names routes by pattern and carries neither the subject nor the content', () => {
    const { spans } = filingTrace();
    const text = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    expect(text).not.toContain(graph.subject);
    expect(text).not.toContain(graph.canary);
    expect(spans.map((s) => s.name).filter((n) => n.startsWith('POST '))).toEqual([
      'POST /v1/tenants/:tenant/erasure-requests',
    ]);
  });
});
