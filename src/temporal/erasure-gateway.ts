import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { ErasureRequestStore } from '../governance/erasure/erasure-request-store.js';
import type { ErasureFiling, ErasureRequest } from '../governance/erasure/erasure-request.js';
import { erasureRequestId, erasureWorkflowId, newErasureRequest } from '../governance/erasure/erasure-filing.js';
import type { Principal } from '../governance/auth/principal.js';
import type { FindingsDecision } from '../governance/erasure/copy-findings.js';
import type { Fingerprinter, TenantMacs } from '../substrate/fingerprint.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { SearchAttributes } from '../shared/search-attributes.js';
import type { ErasureInput } from './contracts/erasure.contract.js';
import {
  erasureRequestWorkflow,
  extendDeadlineUpdate,
  holdReleasedSignal,
  operatorRetryUpdate,
  resolveFindingsUpdate,
} from './contracts/erasure.contract.js';
import { startWorkflow } from './workflow-calls.js';
import { isErasureFinished } from '../shared/erasure-finished.js';

export { erasureRequestId, erasureWorkflowId };

/** What the erasure gateway stands on. */
export interface ErasureGatewayDeps {
  requests: ErasureRequestStore;
  client: Client;
  taskQueue: string;
  fingerprints: Fingerprinter;
  /** Request ids are keyed under the tenant's key: a certificate or audit export naming one confirms no guess. */
  macs: TenantMacs;
}

/** Files erasure requests (idempotently), starts one workflow per request, and sends it the DPO's decisions. */
export class ErasureGateway {
  constructor(private readonly deps: ErasureGatewayDeps) {}

  /**
   * The same filing (same request key, or same selector and ground) returns the existing request while it
   * is open; once it has finished, filing again opens a new request.
   */
  async file(principal: Principal, filing: ErasureFiling): Promise<{ request: ErasureRequest; created: boolean }> {
    const { deps } = this;
    const selectorHash = deps.fingerprints.of('erasure-selector', principal.tenant, canonicalJson(filing.selector));
    for (let generation = 1; ; generation++) {
      const id = erasureRequestId(deps.macs, principal.tenant, filing, selectorHash, generation);
      const { request, created } = await deps.requests.create(
        newErasureRequest({ id, principal, receivedAt: new Date() }, filing, selectorHash),
      );
      if (!created && isErasureFinished(request.state) && !filing.requestKey) continue;
      await this.start(request);
      return { request, created };
    }
  }

  /** Wakes every request waiting on a hold of this tenant; each checks whether the release frees its records. */
  async holdReleased(tenant: string, holdId: string): Promise<number> {
    const waiting = await this.deps.requests.idsInState(tenant, 'partial');
    for (const requestId of waiting) {
      await this.handle(tenant, requestId).signal(holdReleasedSignal, { holdId });
    }
    return waiting.length;
  }

  /**
   * The request keeps the reason's keyed hash only, as the workflow and the audit entry do; the workflow records it
   * with the extension, so an answer of success is never followed by a write of this call's own that could fail.
   */
  async extendDeadline(tenant: string, requestId: string, months: number, reason: string): Promise<{ dueAt: string }> {
    const reasonHash = this.deps.fingerprints.of('extension-reason', tenant, reason);
    return this.handle(tenant, requestId).executeUpdate(extendDeadlineUpdate, { args: [{ months, reasonHash }] });
  }

  /** The DPO's decision on copies found outside the closure; the reason is kept as a keyed hash only. */
  async resolveFindings(
    principal: Principal,
    requestId: string,
    decision: FindingsDecision,
    reason: string,
  ): Promise<void> {
    const reasonHash = this.deps.fingerprints.of('findings-reason', principal.tenant, reason);
    await this.handle(principal.tenant, requestId).executeUpdate(resolveFindingsUpdate, {
      args: [{ decision, reasonHash, decidedBy: principal.id }],
    });
  }

  /** An Update, not a signal: of several operators retrying at once, one is accepted and the others refused. */
  async retry(tenant: string, requestId: string): Promise<void> {
    await this.handle(tenant, requestId).executeUpdate(operatorRetryUpdate);
  }

  private handle(tenant: string, requestId: string) {
    return this.deps.client.workflow.getHandle(erasureWorkflowId(tenant, requestId));
  }

  private async start(request: ErasureRequest): Promise<void> {
    const input: ErasureInput = {
      tenant: request.tenant,
      requestId: request._id,
      receivedAt: request.receivedAt.toISOString(),
    };
    try {
      await startWorkflow(this.deps.client, erasureRequestWorkflow, {
        taskQueue: this.deps.taskQueue,
        workflowId: erasureWorkflowId(request.tenant, request._id),
        // A request runs to completion once: filing it again (same request key) must not start a second run
        // over a finished request. Only a run that failed or was terminated may be started again.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        args: [input],
        typedSearchAttributes: [
          { key: SearchAttributes.tenant, value: request.tenant },
          { key: SearchAttributes.requestId, value: request._id },
          { key: SearchAttributes.workflowKind, value: 'erasure' },
          { key: SearchAttributes.state, value: 'running' },
        ],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}

export function createErasureGateway(deps: ErasureGatewayDeps): ErasureGateway {
  return new ErasureGateway(deps);
}
