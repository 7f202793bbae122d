import { expect } from 'vitest';
import type { TestApp } from './app.js';

/** The shredding of an erasure as the DPO's page shows it (`GET …/erasure-requests/:id`). */
export interface ShreddingShown {
  at: string;
  epoch: number;
  epochs: number[];
  lapsedAt: string | null;
  lapseDue: string | null;
  boundMs: number;
  epochDestroyedAt: string | null;
  epochMaterialDeletedBy?: string;
}

export async function shreddingShown(app: TestApp, tenant: string, requestId: string): Promise<ShreddingShown> {
  const response = await app.request({
    method: 'GET',
    url: `/v1/tenants/${tenant}/erasure-requests/${requestId}`,
    token: await app.token(tenant, ['dpo']),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ shredding: ShreddingShown }>().shredding;
}
