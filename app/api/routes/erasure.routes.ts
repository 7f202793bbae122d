import type { KekEpoch } from '../../../src/substrate/crypto/key-encryption-keys.port.js';
import { z } from 'zod';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErasureGateway } from '../../../src/temporal/erasure-gateway.js';
import type { ErasureRequestStore } from '../../../src/governance/erasure/erasure-request-store.js';
import {
  copiesLapseDue,
  ErasureFilingSchema,
  lapseEpochs,
  type ErasureRequest,
} from '../../../src/governance/erasure/erasure-request.js';
import { FINDINGS_DECISIONS } from '../../../src/governance/erasure/copy-findings.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import { principalOf } from '../authenticate.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf, responseSchemaOf } from './json-schema.js';
import { callWorkflow } from '../workflow-errors.js';
import { decodeCursor, nextCursor, pageQueryProperties } from './pagination.js';
import { isErasureFinished } from '../../../src/shared/erasure-finished.js';
import {
  ErasureDetailSchema,
  ErasurePageSchema,
  type ErasureDetail,
  type ErasureSummary,
} from '../../../src/shared/api-contract/erasure.js';

/** A request as the API sends it: what the routes answer with, and what `/openapi.json` documents. */
const detail = responseSchemaOf(ErasureDetailSchema);

const FindingsDecisionSchema = z.strictObject({
  decision: z.enum(FINDINGS_DECISIONS),
  reason: z.string().min(1).max(2000),
});

const ExtensionSchema = z.strictObject({
  months: z.number().int().min(1).max(2),
  reason: z.string().min(1).max(2000),
});

/** What the status shows: state, steps with timestamps and counts, progress — never the selector or content. */
export function presentErasure(r: ErasureRequest): ErasureDetail {
  return {
    id: r._id,
    state: r.state,
    selectorKind: r.selectorKind,
    selectorHash: r.selectorHash,
    legalGround: r.legalGround,
    requester: r.requester,
    receivedAt: r.receivedAt.toISOString(),
    dueAt: r.dueAt.toISOString(),
    extensionMonths: r.extensionMonths,
    steps: r.steps.map((s) => ({
      step: s.step,
      state: s.state,
      startedAt: s.startedAt.toISOString(),
      finishedAt: s.finishedAt?.toISOString() ?? null,
      counts: s.counts,
    })),
    progress: r.progress,
    counts: r.counts,
    holdIds: r.holdIds,
    certificateIds: r.certificateIds,
    note: r.operatorNote,
    ...(r.exposure ? { exposure: r.exposure } : {}),
    // Ids, kinds and the probes that reached them: never the content they repeat.
    findings: (r.findings ?? []).map((f) => ({ id: f.id, kind: f.kind, probes: f.probes, resolution: f.resolution })),
  };
}

/** One line of the DPO's list: the clock and where the request stands, without steps or selector. */
export function presentErasureSummary(r: ErasureRequest, now: number): ErasureSummary {
  return {
    id: r._id,
    state: r.state,
    selectorKind: r.selectorKind,
    legalGround: r.legalGround,
    receivedAt: r.receivedAt.toISOString(),
    dueAt: r.dueAt.toISOString(),
    extensionMonths: r.extensionMonths,
    overdue: !isErasureFinished(r.state) && r.dueAt.getTime() < now,
    /** When a finished request last changed (its closing): what time-to-close is measured to. */
    closedAt: isErasureFinished(r.state) ? r.updatedAt.toISOString() : null,
    holdIds: r.holdIds,
    certificateIds: r.certificateIds,
  };
}

/** POST …/erasure-requests: 202 with the new request, or 200 with the open one the same filing made. */
export async function fileErasureRequest(
  erasures: ErasureGateway,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const filing = parseOrThrow(ErasureFilingSchema, request.body);
  const { request: filed, created } = await callWorkflow(
    { field: 'requestKey', finished: 'erasure request: already filed and finished under this request key' },
    () => erasures.file(principalOf(request), filing),
  );
  return reply.code(created ? 202 : 200).send(presentErasure(filed));
}

export function registerErasureRoutes(
  app: FastifyInstance,
  deps: {
    erasures: ErasureGateway;
    requests: ErasureRequestStore;
    /** The KEK epochs: when the epoch that wraps a request's shredded keys was destroyed. */
    kekEpochs?: () => Promise<KekEpoch[]>;
  },
): void {
  app.post(
    '/v1/tenants/:tenant/erasure-requests',
    {
      config: { action: 'erasure.request', reads: 'ids' },
      schema: {
        summary: 'File an erasure request (idempotent: the same filing returns the open request)',
        params: tenantParams,
        body: jsonSchemaOf(ErasureFilingSchema),
        response: { ...errorResponses, 200: detail, 202: detail },
      },
    },
    (request, reply) => fileErasureRequest(deps.erasures, request, reply),
  );

  app.get(
    '/v1/tenants/:tenant/erasure-requests',
    {
      config: { action: 'erasure.read', reads: 'ids' },
      schema: {
        summary:
          "The tenant's erasure requests, most recent first: state, GDPR due date, overdue and extension (a page at a time)",
        params: tenantParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: pageQueryProperties,
        },
        response: { ...errorResponses, 200: responseSchemaOf(ErasurePageSchema) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query as { limit: number; cursor?: string };
      const after = decodeCursor(cursor)?.key ?? null;
      const page = await deps.requests.page(principalOf(request).tenant, limit, after);
      const now = Date.now();
      return { items: page.items.map((r) => presentErasureSummary(r, now)), nextCursor: nextCursor(page.next) };
    },
  );

  app.get(
    '/v1/tenants/:tenant/erasure-requests/:id',
    {
      config: { action: 'erasure.read', reads: 'ids' },
      schema: {
        summary: 'An erasure request, step by step',
        params: tenantIdParams,
        response: { ...errorResponses, 200: detail },
      },
    },
    async (request): Promise<ErasureDetail> => {
      const { id } = request.params as { id: string };
      const found = await deps.requests.get(principalOf(request).tenant, id);
      if (!found) throw new DomainError(ErrorType.NotFound, 'erasure request: not found', 'id');
      if (!found.shredding || !deps.kekEpochs) return presentErasure(found);
      // From when the request's content in the database's log and backups is beyond reach: the destruction of the
      // last of the epochs live at its purge (null while any of them lives).
      const all = await deps.kekEpochs();
      const epoch = all.find((e) => e.epoch === found.shredding!.epoch);
      const waited = lapseEpochs(found.shredding).map((n) => all.find((e) => e.epoch === n)?.destroyedAt ?? null);
      const lapsedAt = waited.every((d) => d !== null)
        ? new Date(Math.max(...waited.map((d) => d.getTime()))).toISOString()
        : null;
      return {
        ...presentErasure(found),
        shredding: {
          at: found.shredding.at.toISOString(),
          boundMs: found.shredding.boundMs,
          kek: found.shredding.kek,
          epoch: found.shredding.epoch,
          epochs: lapseEpochs(found.shredding),
          lapsedAt,
          // By when the scheduled rotation promised it (null when rotation was left to an operator).
          lapseDue: copiesLapseDue(found.shredding)?.toISOString() ?? null,
          epochDestroyedAt: epoch?.destroyedAt?.toISOString() ?? null,
          ...(epoch?.materialDeletedBy ? { epochMaterialDeletedBy: epoch.materialDeletedBy.toISOString() } : {}),
        },
      };
    },
  );

  app.post(
    '/v1/tenants/:tenant/erasure-requests/:id/extension',
    {
      config: { action: 'erasure.request', reads: 'ids' },
      schema: {
        summary: 'Extend the GDPR deadline (at most two more months in total, with a reason); the DPO is notified',
        params: tenantIdParams,
        body: jsonSchemaOf(ExtensionSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const tenant = principalOf(request).tenant;
      const body = parseOrThrow(ExtensionSchema, request.body);
      const found = await deps.requests.get(tenant, id);
      if (!found) throw new DomainError(ErrorType.NotFound, 'erasure request: not found', 'id');
      if (isErasureFinished(found.state))
        throw new DomainError(ErrorType.Conflict, 'erasure request: the request already finished', 'id');
      const { dueAt } = await callWorkflow(
        { field: 'months', finished: 'erasure request: the request already finished' },
        () => deps.erasures.extendDeadline(tenant, id, body.months, body.reason),
      );
      return { id, dueAt };
    },
  );

  app.post(
    '/v1/tenants/:tenant/erasure-requests/:id/findings',
    {
      config: { action: 'erasure.request', reads: 'ids' },
      schema: {
        summary:
          'Decide on copies of erased content found outside the closure: extend the request to them, or certify with them stated',
        params: tenantIdParams,
        body: jsonSchemaOf(FindingsDecisionSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const principal = principalOf(request);
      const body = parseOrThrow(FindingsDecisionSchema, request.body);
      const found = await deps.requests.get(principal.tenant, id);
      if (!found) throw new DomainError(ErrorType.NotFound, 'erasure request: not found', 'id');
      if (found.state !== 'needs-dpo')
        throw new DomainError(ErrorType.Conflict, `erasure request: is ${found.state}, not needs-dpo`, 'id');
      await callWorkflow({ field: 'decision', finished: 'erasure request: the request already finished' }, () =>
        deps.erasures.resolveFindings(principal, id, body.decision, body.reason),
      );
      return reply.code(202).send({ id, state: 'running', decision: body.decision });
    },
  );

  app.post(
    '/v1/tenants/:tenant/erasure-requests/:id/retry',
    {
      config: { action: 'erasure.request', reads: 'ids' },
      schema: {
        summary: 'After following the runbook, retry the step a needs-operator request is stuck at',
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const tenant = principalOf(request).tenant;
      const found = await deps.requests.get(tenant, id);
      if (!found) throw new DomainError(ErrorType.NotFound, 'erasure request: not found', 'id');
      if (found.state !== 'needs-operator')
        throw new DomainError(ErrorType.Conflict, `erasure request: is ${found.state}, not needs-operator`, 'id');
      await callWorkflow({ field: 'id', finished: 'erasure request: the request already finished' }, () =>
        deps.erasures.retry(tenant, id),
      );
      return reply.code(202).send({ id, state: 'running' });
    },
  );
}
