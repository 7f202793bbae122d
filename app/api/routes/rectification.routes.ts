import type { FastifyInstance } from 'fastify';
import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import type { Principal } from '../../../src/governance/auth/principal.js';
import type { PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import {
  dueDateOf,
  ExtensionSchema,
  MAX_EXTENSION_MONTHS,
  correctedCopyId,
  RectificationDecisionSchema,
  RectificationFilingSchema,
  type RectificationRequest,
} from '../../../src/governance/rights/rectification.js';
import type { Fingerprinter } from '../../../src/substrate/fingerprint.js';
import type { RectificationGateway } from '../../../src/temporal/rectification-gateway.js';
import type { RectificationStore } from '../../../src/governance/rights/rectification-store.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import type { RectificationDecisionInput } from '../../../src/temporal/contracts/rectification.contract.js';
import { principalOf } from '../authenticate.js';
import { presentRectificationProposal } from '../presenters.js';
import { callWorkflow } from '../workflow-errors.js';
import { errorResponses, tenantIdParams, tenantParams } from './route-schemas.js';
import { jsonSchemaOf } from './json-schema.js';
import { createPolicyGate, policyAllows } from './policy-gate.js';
import type { DecisionGateway } from '../../../src/temporal/decision-gateway.js';
import { selfReviewRefusal } from '../../../src/shared/self-review.js';

/** What a request shows: ids, the corrected content's keyed hash, states and dates; never the content itself. */
export function presentRectification(r: RectificationRequest) {
  return {
    id: r._id,
    state: r.state,
    memoryId: r.memoryId,
    // Keyed (`content-hash.ts`); a request filed before keying holds the plain digest, not shown.
    ...(r.hashKeyId !== undefined ? { contentHash: r.contentHash } : {}),
    eraseInaccurate: r.eraseInaccurate,
    requester: r.requester,
    receivedAt: r.receivedAt.toISOString(),
    dueAt: r.dueAt.toISOString(),
    extensionMonths: r.extensionMonths,
    decidedBy: r.decidedBy,
    decidedAt: r.decidedAt?.toISOString() ?? null,
    correctedId: r.correctedId,
    // The copies of the value the correction reaches, each with the record that holds its correction once applied.
    siblings: (r.siblings ?? []).map((memoryId) => ({
      memoryId,
      correctedId: r.state === 'applied' ? correctedCopyId(r._id, memoryId) : null,
    })),
    derived: r.derived,
    erasureRequestId: r.erasureRequestId,
  };
}

export interface RectificationRouteDeps {
  rectifications: RectificationGateway;
  store: RectificationStore;
  audit: AuditLog;
  policy: PolicyDocument;
  decisions: DecisionGateway;
  fingerprints: Fingerprinter;
}

/**
 * Rectification requests (Art. 16): the DPO files a correction of one memory, a reviewer who neither wrote the
 * record nor filed the correction decides, and the request's page shows what was done. The subject-rectification
 * policy decides who may do which.
 */
export function registerRectificationRoutes(app: FastifyInstance, deps: RectificationRouteDeps): void {
  const base = '/v1/tenants/:tenant/subject-rights/rectification';
  const authorise = createPolicyGate({
    policy: deps.policy,
    audit: deps.audit,
    prefix: 'rectification',
    noun: () => 'a rectification request',
    reads: ['read'],
  });

  const found = async (principal: Principal, id: string) => {
    const request = await deps.rectifications.get(principal.tenant, id);
    if (!request) throw new DomainError(ErrorType.NotFound, `no rectification request ${id}`, 'id');
    return request;
  };

  app.post(
    base,
    {
      config: { action: 'rectification.request', reads: 'ids' },
      schema: {
        summary:
          'File a correction of one memory (Art. 16) with the corrected content: from filing the record is not served as current; a reviewer decides; idempotent by requestKey',
        params: tenantParams,
        body: jsonSchemaOf(RectificationFilingSchema),
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const filing = parseOrThrow(RectificationFilingSchema, request.body);
      await authorise(principal, 'file');
      const { request: filed, created } = await deps.rectifications.file(principal, filing);
      return reply.code(created ? 202 : 200).send(presentRectification(filed));
    },
  );

  app.get(
    base,
    {
      config: { action: 'rectification.read', reads: 'ids' },
      schema: {
        summary: "The tenant's rectification requests, newest first (ids, digests and dates)",
        params: tenantParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await authorise(principal, 'read');
      return { items: (await deps.rectifications.list(principal.tenant, 100)).map(presentRectification) };
    },
  );

  app.get(
    `${base}/:id`,
    {
      config: { action: 'rectification.read', reads: 'ids' },
      schema: {
        summary: "A rectification request's state: what was corrected, by whom, and what became of derived records",
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await authorise(principal, 'read');
      return presentRectification(await found(principal, (request.params as { id: string }).id));
    },
  );

  app.get(
    `${base}/:id/proposal`,
    {
      config: { action: 'rectification.proposal', reads: 'records' },
      schema: {
        summary:
          'The corrected content an open correction proposes, for the reviewer who decides it and the DPO who filed it (every read is audited)',
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      // Readable by whoever may decide or file it: the words are the DPO's, about the record's subject.
      if (!policyAllows(deps.policy, principal, 'decide') && !policyAllows(deps.policy, principal, 'file'))
        await authorise(principal, 'decide');
      const filed = await found(principal, id);
      const content = filed.state === 'awaiting-review' ? await deps.store.contentOf(principal.tenant, id) : null;
      if (content === null)
        throw new DomainError(
          ErrorType.Gone,
          `rectification ${id}: its proposal is no longer kept (${filed.state}); the corrected record holds it`,
          'id',
        );
      await deps.audit.append({
        tenant: principal.tenant,
        actor: principal.id,
        action: 'rectification.proposal-read',
        target: id,
        outcome: 'ok',
        details: { memoryId: filed.memoryId },
      });
      return presentRectificationProposal({ id, memoryId: filed.memoryId, content, contentHash: filed.contentHash });
    },
  );

  app.post(
    `${base}/:id/extension`,
    {
      config: { action: 'rectification.request', reads: 'ids' },
      schema: {
        summary:
          "Extend an open correction's due date (Art. 12(3): at most two more months in all), with a reason kept as a keyed hash",
        params: tenantIdParams,
        body: jsonSchemaOf(ExtensionSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const body = parseOrThrow(ExtensionSchema, request.body);
      await authorise(principal, 'file');
      const filed = await found(principal, id);
      if (filed.state !== 'awaiting-review')
        throw new DomainError(ErrorType.Conflict, `rectification: already ${filed.state}`, 'id');
      const from = filed.extensionMonths;
      if (from + body.months > MAX_EXTENSION_MONTHS)
        throw new DomainError(ErrorType.Conflict, 'months: at most two months of extension in total', 'months');
      const reasonHash = deps.fingerprints.of('rectification-extension', principal.tenant, body.reason);
      const dueAt = dueDateOf(filed.receivedAt, from + body.months);
      if (!(await deps.store.extend(principal.tenant, id, from, from + body.months, dueAt, reasonHash)))
        throw new DomainError(ErrorType.Conflict, 'rectification: changed by another call; read it again', 'id');
      await deps.audit.append({
        tenant: principal.tenant,
        actor: principal.id,
        action: 'rectification.extended',
        target: id,
        outcome: 'ok',
        details: { months: body.months, dueAt: dueAt.toISOString(), reasonHash },
      });
      return presentRectification(await found(principal, id));
    },
  );

  app.post(
    `${base}/:id/decision`,
    {
      config: { action: 'rectification.decide', reads: 'ids' },
      schema: {
        summary:
          'Approve or reject a correction, with a reason: approved, the corrected value becomes current, the old one is superseded, and derived records are flagged or erased',
        params: tenantIdParams,
        body: jsonSchemaOf(RectificationDecisionSchema),
        response: errorResponses,
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { id } = request.params as { id: string };
      const body = parseOrThrow(RectificationDecisionSchema, request.body);
      await authorise(principal, 'decide');
      const filed = await found(principal, id);
      if (filed.state !== 'awaiting-review')
        throw new DomainError(ErrorType.Conflict, `rectification: already ${filed.state}`, 'id');
      const refused = selfReviewRefusal(
        { kind: 'rectification', writers: filed.writers, requester: filed.requester },
        principal.id,
      );
      if (refused) throw new DomainError(ErrorType.Forbidden, refused, 'reviewer');
      const args: RectificationDecisionInput = {
        reviewer: principal.id,
        decision: body.decision,
        reasonHash: deps.fingerprints.of('rectification-reason', principal.tenant, body.reason),
      };
      const result = await callWorkflow({ field: 'id', finished: 'rectification: already decided' }, () =>
        deps.decisions.decideRectification(principal.tenant, id, args),
      );
      return { ...presentRectification(await found(principal, id)), erasureRequestId: result.erasureRequestId };
    },
  );
}
