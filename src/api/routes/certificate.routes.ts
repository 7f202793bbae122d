import type { FastifyInstance } from 'fastify';
import { canonicalJson } from '../../shared/canonical-json.js';
import { DomainError, ErrorType } from '../../shared/errors.js';
import type { CertificateStore } from '../../governance/certificates/certificate-store.js';
import { parsePeriod } from '../../governance/certificates/certificate-period.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';

/** The auditor's and the DPO's access to deletion certificates and to the key that verifies them. */
export function registerCertificateRoutes(
  app: FastifyInstance,
  deps: { certificates: CertificateStore; publicKeyPem: string },
): void {
  app.get(
    '/v1/tenants/:tenant/certificates',
    {
      config: { action: 'certificate.export', reads: 'ids' },
      schema: {
        summary: "Export the tenant's deletion certificates as JSONL (chain order), for offline verification",
        params: tenantParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            from: {
              type: 'string',
              minLength: 10,
              maxLength: 40,
              description: 'issued at or after (ISO 8601 date or date-time)',
            },
            to: {
              type: 'string',
              minLength: 10,
              maxLength: 40,
              description: 'issued at or before (a date alone: the whole day)',
            },
          },
        },
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { from, to } = request.query as { from?: string; to?: string };
      const period = parsePeriod(from, to);
      const lines: string[] = [];
      for await (const certificate of deps.certificates.list(principalOf(request).tenant, period)) {
        lines.push(`${canonicalJson(certificate)}\n`);
      }
      return reply.type('application/x-ndjson').send(lines.join(''));
    },
  );

  app.get(
    '/v1/tenants/:tenant/certificates/public-key',
    {
      config: { action: 'certificate.export', reads: 'ids' },
      schema: {
        summary: 'The Ed25519 public key (SPKI PEM) that verifies the certificates',
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (_request, reply) => reply.type('application/x-pem-file').send(deps.publicKeyPem),
  );

  app.get(
    '/v1/tenants/:tenant/certificates/:id',
    {
      config: { action: 'certificate.export', reads: 'ids' },
      schema: {
        summary: 'One deletion certificate (canonical JSON)',
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const certificate = await deps.certificates.get(principalOf(request).tenant, id);
      if (!certificate) throw new DomainError(ErrorType.NotFound, 'certificate: not found', 'id');
      return reply.type('application/json').send(canonicalJson(certificate));
    },
  );
}
