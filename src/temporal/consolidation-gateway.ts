import type { Client } from '@temporalio/client';
import type { Principal } from '../governance/auth/principal.js';
import { consolidationWorkflowId } from '../shared/workflow-ids.js';
import { SearchAttributes } from '../shared/search-attributes.js';
import type { ConsolidationResult } from './contracts/consolidation.contract.js';
import type { ConsolidationRequest } from '../ingestion/write-schemas.js';
import { consolidationWorkflow } from './contracts/consolidation.contract.js';
import { startWorkflow } from './workflow-calls.js';

/** A run's answer: its result, or, past the wait, that it is still going (ids only). */
export type ConsolidationAnswer =
  ({ state: 'completed'; workflowId: string } & ConsolidationResult) | { state: 'running'; workflowId: string };

/**
 * Starts a consolidation run (or joins the one running for the same namespace and scope) and waits for it, at most
 * `waitMs`: past that, the run goes on and the answer says so.
 */
export interface ConsolidationGateway {
  run(principal: Principal, request: ConsolidationRequest): Promise<ConsolidationAnswer>;
}

export function createConsolidationGateway(deps: {
  client: Client;
  taskQueue: string;
  /** Pause between two views' writes (`LETHE_CONSOLIDATION_PAUSE_MS`). */
  pauseMs: number;
  /** How long a call waits for its run (`LETHE_CONSOLIDATION_WAIT_MS`). */
  waitMs: number;
}): ConsolidationGateway {
  return {
    async run(principal, request) {
      const owner = request.scope === 'tenant' ? 'tenant' : principal.id;
      const handle = await startWorkflow(deps.client, consolidationWorkflow, {
        taskQueue: deps.taskQueue,
        workflowId: consolidationWorkflowId(principal.tenant, request.namespace, owner),
        // A trigger while a run is going joins it: one run at a time per namespace and scope.
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [
          {
            tenant: principal.tenant,
            namespace: request.namespace,
            principal: principal.id,
            roles: principal.roles,
            scope: request.scope,
            trigger: request.trigger,
            pauseMs: deps.pauseMs,
          },
        ],
        typedSearchAttributes: [
          { key: SearchAttributes.tenant, value: principal.tenant },
          { key: SearchAttributes.workflowKind, value: 'consolidation' },
        ],
      });
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), deps.waitMs)));
      try {
        const result = await Promise.race([handle.result() as Promise<ConsolidationResult>, waited]);
        return result
          ? { state: 'completed', workflowId: handle.workflowId, ...result }
          : { state: 'running', workflowId: handle.workflowId };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
