/** Workflow ids derived from the records they govern: one workflow per record or request, by construction. */
/** One adjudication workflow per dispute (the dispute id is derived from its pair of records). */
export function disputeWorkflowId(tenant: string, disputeId: string): string {
  return `dispute-${tenant}-${disputeId}`;
}

export function reviewWorkflowId(tenant: string, memoryId: string): string {
  return `review-${tenant}-${memoryId}`;
}

export function erasureWorkflowId(tenant: string, requestId: string): string {
  return `erasure-${tenant}-${requestId}`;
}

export function rectificationWorkflowId(tenant: string, requestId: string): string {
  return `rectification-${tenant}-${requestId}`;
}

/** One consolidation run at a time per namespace and owner scope: a trigger during a run joins it. */
export function consolidationWorkflowId(tenant: string, namespace: string, scopeOwner: string): string {
  return `consolidation-${tenant}-${namespace}-${scopeOwner}`;
}
