/** Workflow ids derived from the records they govern: one workflow per record or request, by construction. */
export function reviewWorkflowId(tenant: string, memoryId: string): string {
  return `review-${tenant}-${memoryId}`;
}
