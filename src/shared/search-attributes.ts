import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes registered on the Temporal server: ids, states and kinds only — never personal data. */
export const SearchAttributes = {
  tenant: defineSearchAttributeKey('LetheTenant', SearchAttributeType.KEYWORD),
  requestId: defineSearchAttributeKey('LetheRequestId', SearchAttributeType.KEYWORD),
  state: defineSearchAttributeKey('LetheState', SearchAttributeType.KEYWORD),
  workflowKind: defineSearchAttributeKey('LetheWorkflowKind', SearchAttributeType.KEYWORD),
} as const;
