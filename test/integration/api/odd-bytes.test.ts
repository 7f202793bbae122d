/**
 * Odd bytes in every string the API accepts, driven from its own `/openapi.json`: every path parameter, query
 * parameter and body string (at any depth, keys included) of every operation gets a NUL, an escape and a DEL.
 * Each is refused with 400 naming the field, and no response is ever a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { ROLES } from '../../../src/governance/auth/principal.js';

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  minItems?: number;
}
interface Operation {
  parameters?: { name: string; in: 'path' | 'query' | 'header'; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

const ODD = ['\u0000x', 'a\u001bb', 'z\u007f'];

/** A value the schema accepts as far as shape goes, with the path of every string leaf in it. */
function sample(schema: Schema | undefined, path: string, leaves: string[]): unknown {
  if (!schema) return 'x';
  const variant = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (variant) return sample(variant, path, leaves);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(schema.properties ?? {}))
      out[key] = sample(child, `${path}.${key}`, leaves);
    return out;
  }
  if (type === 'array') return [sample(schema.items, `${path}.0`, leaves)];
  if (type === 'integer' || type === 'number') return Math.max(1, schema.minimum ?? 1);
  if (type === 'boolean') return true;
  leaves.push(path);
  return 'x';
}

function setAt(root: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.').slice(1);
  let at: Record<string, unknown> = root;
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
  at[keys.at(-1)!] = value;
}

describe('odd bytes in every string the API accepts', () => {
  let app: TestApp;
  let operations: [string, string, Operation][];
  const tenant = uniqueTenant();
  let token: string;
  const statuses: number[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.token(tenant, [...ROLES], 'ops-odd');
    const spec = (await app.request({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, Operation>>;
    }>();
    operations = Object.entries(spec.paths).flatMap(([url, methods]) =>
      Object.entries(methods)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, op]) => [method.toUpperCase(), url, op] as [string, string, Operation]),
    );
  });
  afterAll(async () => {
    await app?.close();
    const fivexx = statuses.filter((s) => s >= 500).length;
    console.log(`odd-byte requests: ${statuses.length}; responses ≥ 500: ${fivexx}`);
  });

  const send = async (method: string, url: string, payload?: unknown) => {
    const response = await app.request({
      method: method as 'GET',
      url,
      token,
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    statuses.push(response.statusCode);
    return response;
  };
  const pathOf = (url: string, params: Record<string, string>) =>
    url.replace(/\{(\w+|\*)\}/g, (_, name: string) => params[name] ?? (name === 'tenant' ? tenant : 'x1'));

  it('finds the operations in the API description', () => {
    expect(operations.length).toBeGreaterThanOrEqual(15);
  });

  it('refuses a control character in every path parameter with 400 naming it', async () => {
    let tried = 0;
    for (const [method, url, op] of operations) {
      const names = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      for (const name of names) {
        for (const odd of ODD) {
          tried++;
          const response = await send(
            method,
            pathOf(url, { [name]: encodeURIComponent(odd) }),
            method === 'GET' ? undefined : {},
          );
          expect(response.statusCode, `${method} ${url} ${name}=${JSON.stringify(odd)}: ${response.body}`).toBe(400);
          expect(response.json<{ error: { field: string } }>().error.field).toBe(name);
        }
      }
    }
    expect(tried).toBeGreaterThan(20);
  });

  it('refuses a control character in every query parameter with 400 naming it', async () => {
    for (const [method, url, op] of operations) {
      for (const param of (op.parameters ?? []).filter((p) => p.in === 'query')) {
        const response = await send(method, `${pathOf(url, {})}?${param.name}=${encodeURIComponent(ODD[0]!)}`);
        expect(response.statusCode, `${method} ${url} ?${param.name}: ${response.body}`).toBe(400);
        expect(response.json<{ error: { field: string } }>().error.field).toBe(param.name);
      }
    }
  });

  it('refuses a control character in every body string, at any depth, with 400 naming the field', async () => {
    let tried = 0;
    for (const [method, url, op] of operations) {
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (!schema) continue;
      const leaves: string[] = [];
      const base = sample(schema, 'body', leaves) as Record<string, unknown>;
      for (const leaf of leaves) {
        for (const odd of ODD) {
          tried++;
          const body = structuredClone(base);
          setAt(body, leaf, odd);
          const response = await send(method, pathOf(url, {}), body);
          expect(response.statusCode, `${method} ${url} ${leaf}: ${response.body}`).toBe(400);
          expect(response.json<{ error: { field: string } }>().error.field).toBe(leaf.replace(/^body\./, ''));
        }
      }
      // A key with a control character is refused as well.
      const response = await send(method, pathOf(url, {}), { ...base, 'k\u0000': 'x' });
      expect(response.statusCode, `${method} ${url} odd key`).toBe(400);
    }
    expect(tried).toBeGreaterThan(30);
  });

  it('answers no request with a 5xx', () => {
    expect(statuses.length).toBeGreaterThan(100);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  });
});
