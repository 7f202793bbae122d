import type { FastifyInstance } from 'fastify';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantParams } from './route-schemas.js';
import type { CheckpointStore } from '../../../src/governance/audit/log-tree/checkpoint-store.js';
import type { LogTiles } from '../../../src/governance/audit/log-tree/log-tiles.js';
import { parseTilePath } from '../../../src/governance/audit/log-tree/tile-path.js';
import { cosignedNote } from '../../../src/governance/audit/witness/cosignature.js';
import { DomainError, ErrorType, validationError } from '../../../src/shared/errors.js';

/**
 * The tenant's audit log under `…/audit/log/` as a C2SP tlog-tiles log: `checkpoint` and `tile/…`. Any tlog client
 * given that prefix (and the token) reads the log and checks it against the checkpoint. Tiles never change once
 * served, so they may be cached for good; the checkpoint moves on.
 */
export function registerAuditTileRoutes(
  app: FastifyInstance,
  deps: { tiles: LogTiles; checkpoints: CheckpointStore },
): void {
  app.get(
    '/v1/tenants/:tenant/audit/log/checkpoint',
    {
      config: { action: 'audit.export', reads: 'ids' },
      schema: {
        summary:
          "The latest signed checkpoint of the tenant's audit log as a signed note, cosignatures included (tlog-tiles)",
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const tenant = principalOf(request).tenant;
      const latest = await deps.checkpoints.latest(tenant);
      if (!latest) throw new DomainError(ErrorType.NotFound, 'checkpoint: none published yet for this log', 'tenant');
      return reply
        .header('cache-control', 'private, no-cache')
        .type('text/plain; charset=utf-8')
        .send(cosignedNote(latest).note);
    },
  );

  app.get(
    '/v1/tenants/:tenant/audit/log/tile/*',
    {
      config: { action: 'audit.export', reads: 'ids' },
      schema: {
        summary:
          "A tile of the tenant's audit log (C2SP tlog-tiles): `tile/<L>/<N>[.p/<W>]` for hashes, `tile/entries/<N>[.p/<W>]` for entries",
        params: {
          type: 'object',
          required: ['tenant', '*'],
          properties: {
            ...tenantParams.properties,
            '*': { type: 'string', maxLength: 128, description: 'The path after `tile/`, e.g. `0/x001/234.p/8`' },
          },
        },
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const tenant = principalOf(request).tenant;
      const parsed = parseTilePath(`tile/${(request.params as { '*': string })['*']}`);
      if (!parsed.ok) throw validationError('tile', parsed.reason);
      const bytes = await deps.tiles.read(tenant, parsed.tile);
      return reply
        .header('cache-control', 'private, max-age=31536000, immutable')
        .type('application/octet-stream')
        .send(Buffer.from(bytes));
    },
  );
}
