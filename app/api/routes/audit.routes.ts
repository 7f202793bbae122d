import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import { exportAuditJsonl } from '../../../src/governance/audit/audit-export.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantParams } from './route-schemas.js';
import { jsonSchemaOf, responseSchemaOf } from './json-schema.js';
import type { LogTree } from '../../../src/governance/audit/log-tree/log-tree-store.js';
import type { CheckpointStore } from '../../../src/governance/audit/log-tree/checkpoint-store.js';
import { cosignedNote } from '../../../src/governance/audit/witness/cosignature.js';
import {
  CheckpointViewSchema,
  ConsistencyProofSchema,
  InclusionProofSchema,
  type CheckpointView,
  type ConsistencyProofView,
  type InclusionProofView,
  WitnessKeysViewSchema,
  type WitnessKeysView,
} from '../../../src/shared/api-contract/audit.js';
import { DomainError, ErrorType, validationError } from '../../../src/shared/errors.js';
import { parseOrThrow } from '../../../src/shared/validation.js';

export function registerAuditRoutes(
  app: FastifyInstance,
  deps: {
    audit: AuditLog;
    tree: LogTree;
    checkpoints: CheckpointStore;
    witnessKeys: readonly { name: string; key: string }[];
  },
): void {
  app.get(
    '/v1/tenants/:tenant/audit',
    {
      config: { action: 'audit.export', reads: 'ids' },
      schema: {
        summary: "Export the tenant's audit chain as JSONL, for offline verification",
        params: tenantParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { fromSeq: { type: 'integer', minimum: 1 }, toSeq: { type: 'integer', minimum: 1 } },
        },
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { fromSeq, toSeq } = request.query as { fromSeq?: number; toSeq?: number };
      const range = { ...(fromSeq ? { fromSeq } : {}), ...(toSeq ? { toSeq } : {}) };
      // Streamed: a tenant's chain grows without bound, and the export must not be held in memory whole.
      return reply
        .type('application/x-ndjson')
        .send(Readable.from(exportAuditJsonl(deps.audit, principalOf(request).tenant, range)));
    },
  );

  app.get(
    '/v1/tenants/:tenant/audit/checkpoint',
    {
      config: { action: 'audit.export', reads: 'ids' },
      schema: {
        summary:
          "The latest signed checkpoint of the tenant's audit log (C2SP tlog-checkpoint, as a signed note), with the witnesses' cosignatures",
        params: tenantParams,
        response: { ...errorResponses, 200: responseSchemaOf(CheckpointViewSchema) },
      },
    },
    async (request): Promise<CheckpointView> => {
      const tenant = principalOf(request).tenant;
      const latest = await deps.checkpoints.latest(tenant);
      if (!latest) throw new DomainError(ErrorType.NotFound, 'checkpoint: none published yet for this log', 'tenant');
      const { note, cosignatures } = cosignedNote(latest);
      return {
        origin: deps.checkpoints.originOf(tenant),
        size: latest.size,
        root: latest.root,
        note,
        verifierKey: deps.checkpoints.verifierKeyOf(tenant),
        at: latest.at.toISOString(),
        cosignatures: cosignatures.map(([witness, c]) => ({
          witness,
          keyName: c.keyName,
          keyId: c.keyId,
          at: new Date(c.timestamp * 1000).toISOString(),
        })),
      };
    },
  );

  app.get(
    '/v1/tenants/:tenant/audit/witnesses',
    {
      config: { action: 'audit.export', reads: 'ids' },
      schema: {
        summary:
          'The witnesses this deployment asks to cosign checkpoints, with their cosignature verifier keys (from its configuration)',
        params: tenantParams,
        response: { ...errorResponses, 200: responseSchemaOf(WitnessKeysViewSchema) },
      },
    },
    // The same for every tenant: configuration, not data. The auditor still compares the keys with the witnesses' own.
    async (): Promise<WitnessKeysView> => ({ witnesses: deps.witnessKeys.map(({ name, key }) => ({ name, key })) }),
  );

  app.get(
    '/v1/tenants/:tenant/audit/proofs/inclusion',
    {
      config: { action: 'audit.export', reads: 'ids' },
      schema: {
        summary: "That the entry at `index` (its seq − 1) is in the log's tree of `size` entries (RFC 6962)",
        params: tenantParams,
        querystring: jsonSchemaOf(InclusionQuerySchema),
        response: { ...errorResponses, 200: responseSchemaOf(InclusionProofSchema) },
      },
    },
    async (request): Promise<InclusionProofView> => {
      const tenant = principalOf(request).tenant;
      const { index, size } = parseOrThrow(InclusionQuerySchema, request.query);
      if (index >= size) throw validationError('index', `must be below size (${size})`);
      const proof = await deps.tree.inclusion(tenant, index, size);
      const leaf = await deps.tree.leaf(tenant, index);
      if (!leaf) throw new DomainError(ErrorType.NotFound, 'index: no such entry in the tree', 'index');
      return { index, size, leaf: base64(leaf), proof: proof.map(base64) };
    },
  );

  app.get(
    '/v1/tenants/:tenant/audit/proofs/consistency',
    {
      config: { action: 'audit.export', reads: 'ids' },
      schema: {
        summary: "That the log's tree of `to` entries extends its tree of `from` entries (RFC 6962)",
        params: tenantParams,
        querystring: jsonSchemaOf(ConsistencyQuerySchema),
        response: { ...errorResponses, 200: responseSchemaOf(ConsistencyProofSchema) },
      },
    },
    async (request): Promise<ConsistencyProofView> => {
      const tenant = principalOf(request).tenant;
      const { from, to } = parseOrThrow(ConsistencyQuerySchema, request.query);
      if (from > to) throw validationError('from', `must not exceed to (${to})`);
      const proof = await deps.tree.consistency(tenant, from, to);
      return { from, to, proof: proof.map(base64) };
    },
  );
}

/** Tree sizes and indexes: whole numbers a JavaScript number holds exactly. */
const count = (min: number) => z.coerce.number().int().min(min).max(Number.MAX_SAFE_INTEGER);
const InclusionQuerySchema = z.strictObject({ index: count(0), size: count(1) });
const ConsistencyQuerySchema = z.strictObject({ from: count(1), to: count(1) });

const base64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
