export { connectivityCheck } from './connectivity-check.workflow.js';
export { ingestBatch } from './ingest-batch.workflow.js';
export { erasureRequest } from './erasure.workflow.js';
export { disputeReview } from './dispute-review.workflow.js';
export { memoryReview } from './memory-review.workflow.js';
export { retentionSweep } from './retention-sweep.workflow.js';
export { reembedTenant } from './reembed-tenant.workflow.js';
export { accessRequest } from './access-request.workflow.js';
