import type { FastifyInstance } from 'fastify';
import { previewSelector, type SelectorPreviewDeps } from '../../../src/governance/rights/selector-preview.js';
import { SelectorForSubjectSchema } from '../../../src/governance/rights/access-request.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import type { ReceiptStore } from '../../../src/governance/rights/receipt-store.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import { jsonSchemaOf } from './json-schema.js';

/** A selector, and optionally the subject a request of it would answer (whose derived records are not collateral). */
const PreviewSchema = SelectorForSubjectSchema;

/** What a DPO sees of a data subject before filing a request about them, and each closed request's receipt. */
export function registerRightsRoutes(
  app: FastifyInstance,
  deps: SelectorPreviewDeps & { receipts: ReceiptStore },
): void {
  app.get(
    '/v1/tenants/:tenant/subject-rights/receipts/:id',
    {
      config: { action: 'receipt.read', reads: 'ids' },
      schema: {
        summary:
          "A closed subject-rights request's signed receipt (ids, states, dates, counts), anchored in the audit chain; lethe verify checks it offline",
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const receipt = await deps.receipts.get(principalOf(request).tenant, id);
      if (!receipt) throw new DomainError(ErrorType.NotFound, `no receipt for request ${id} (not closed yet?)`, 'id');
      return receipt;
    },
  );

  app.get(
    '/v1/tenants/:tenant/subject-rights/receipts/:id/anchored',
    {
      config: { action: 'receipt.read', reads: 'ids' },
      schema: {
        summary:
          "A closed request's signed receipt with its place in the audit log: the entry, a signed checkpoint and the entry's inclusion proof (lethe verify --log-key checks it without the chain)",
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const anchored = await deps.receipts.anchored(principalOf(request).tenant, id);
      if (!anchored) throw new DomainError(ErrorType.NotFound, `no receipt for request ${id} (not closed yet?)`, 'id');
      return anchored;
    },
  );

  app.post(
    '/v1/tenants/:tenant/subject-rights/preview',
    {
      // Who may file may look first: the preview shows ids and counts, as the request's own status does.
      config: { action: 'erasure.request', reads: 'ids' },
      schema: {
        summary:
          'What a request with this selector would reach if filed now: located records, derived views, holds, readers (ids and counts; nothing is fenced or recorded)',
        params: tenantParams,
        body: jsonSchemaOf(PreviewSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const { selector, subjectId } = parseOrThrow(PreviewSchema, request.body);
      const preview = await previewSelector(deps, principalOf(request).tenant, selector, subjectId);
      return {
        ...preview,
        readers: preview.readers.map((r) => ({ ...r, lastRetrievedAt: r.lastRetrievedAt.toISOString() })),
      };
    },
  );
}
