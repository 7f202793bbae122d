import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import type { CertificatePeriod, CertificateStore } from '../../../src/governance/certificates/certificate-store.js';
import { parsePeriod } from '../../../src/governance/certificates/certificate-period.js';
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
      // Streamed as the store reads the chain, batch by batch: a tenant's certificates grow without bound, and the
      // export must not be held in memory whole.
      return reply
        .type('application/x-ndjson')
        .send(Readable.from(certificateLines(deps.certificates, principalOf(request).tenant, period)));
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

  app.get(
    '/v1/tenants/:tenant/certificates/:id/anchored',
    {
      config: { action: 'certificate.export', reads: 'ids' },
      schema: {
        summary:
          "One deletion certificate with its place in the audit log: the entry recording it, a signed checkpoint and the entry's inclusion proof (lethe verify --log-key checks it without the chain)",
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const anchored = await deps.certificates.anchored(principalOf(request).tenant, id);
      if (!anchored) throw new DomainError(ErrorType.NotFound, 'certificate: not found', 'id');
      return reply.type('application/json').send(canonicalJson(anchored));
    },
  );
}

async function* certificateLines(
  certificates: CertificateStore,
  tenant: string,
  period: CertificatePeriod,
): AsyncIterable<string> {
  for await (const certificate of certificates.list(tenant, period)) yield `${canonicalJson(certificate)}\n`;
}
