/**
 * The erasure routes answer exactly their contract (`src/shared/api-contract/erasure.ts`): every answer parses under
 * the contract's strict schema, which refuses a field it does not name as well as a missing one, and `/openapi.json`
 * documents the same fields the contract holds. The console and the CLI are typed from that contract, so what they
 * read is what is sent.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  ErasureDetailSchema,
  ErasurePageSchema,
  ErasureSummarySchema,
} from '../../../src/shared/api-contract/erasure.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, completeErasure, type SubjectGraph } from '../../support/erasure-fixture.js';

interface OpenApi {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>
  >;
}
interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
}

const fieldsOf = (schema: z.ZodObject) => Object.keys(schema.shape).sort();

describe('the erasure routes answer their contract', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  let dpo: string;
  let requestId: string;
  const filings: { status: number; body: unknown }[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    dpo = await app.token(graph.tenant, ['dpo'], 'dpo-1');
    // The same filing twice: 202 with the new request, then 200 with the open one.
    for (let i = 0; i < 2; i++) {
      const filed = await app.request({
        method: 'POST',
        url: `/v1/tenants/${graph.tenant}/erasure-requests`,
        token: dpo,
        payload: {
          selector: { subjectId: graph.subject },
          legalGround: 'art17-1a',
          requestKey: `contract-${graph.tenant}`,
        },
      });
      filings.push({ status: filed.statusCode, body: filed.json() });
    }
    requestId = (filings[0]!.body as { id: string }).id;
    expect((await completeErasure(app, graph.tenant, requestId, 'certify')).state).toBe('completed');
  }, 240_000);
  afterAll(async () => {
    await app?.close();
  });

  it('files with a 202 and then a 200, each body exactly a request as the contract shapes it', () => {
    expect(filings.map((f) => f.status)).toEqual([202, 200]);
    for (const f of filings) expect(() => ErasureDetailSchema.parse(f.body)).not.toThrow();
    expect((filings[1]!.body as { id: string }).id).toBe(requestId);
  });

  it("answers a finished request's status with its steps, counts and certificate, and no field the contract lacks", async () => {
    const got = await app.request({
      method: 'GET',
      url: `/v1/tenants/${graph.tenant}/erasure-requests/${requestId}`,
      token: dpo,
    });
    expect(got.statusCode, got.body).toBe(200);
    const detail = ErasureDetailSchema.parse(got.json());
    expect(detail).toMatchObject({ id: requestId, state: 'completed' });
    expect(detail.steps.map((s) => s.step)).toContain('purge');
    expect(detail.certificateIds).toHaveLength(1);
    expect(got.body).not.toContain(graph.subject);
  });

  it("answers the DPO's list as pages of summaries", async () => {
    const got = await app.request({ method: 'GET', url: `/v1/tenants/${graph.tenant}/erasure-requests`, token: dpo });
    expect(got.statusCode, got.body).toBe(200);
    const page = ErasurePageSchema.parse(got.json());
    expect(page.items.map((i) => i.id)).toEqual([requestId]);
  });

  it('documents in /openapi.json the fields the contract holds, for each answer of each route', async () => {
    const doc = (await app.request({ method: 'GET', url: '/openapi.json' })).json<OpenApi>();
    const answer = (path: string, method: string, status: string): Schema | undefined =>
      doc.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.schema;
    const keys = (schema: Schema | undefined) => Object.keys(schema?.properties ?? {}).sort();

    const list = '/v1/tenants/{tenant}/erasure-requests';
    const one = '/v1/tenants/{tenant}/erasure-requests/{id}';
    expect(keys(answer(list, 'post', '202'))).toEqual(fieldsOf(ErasureDetailSchema));
    expect(keys(answer(list, 'post', '200'))).toEqual(fieldsOf(ErasureDetailSchema));
    expect(keys(answer(one, 'get', '200'))).toEqual(fieldsOf(ErasureDetailSchema));
    expect(keys(answer(list, 'get', '200')?.properties?.items?.items)).toEqual(fieldsOf(ErasureSummarySchema));
  });
});
