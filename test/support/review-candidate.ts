import type { Services } from '../../app/services.js';
import type { MemoryRecord } from '../../src/substrate/model/records.js';
import { uniqueId } from './harness.js';

/** A high-impact HR fact waiting in `candidate` for a reviewer, written straight to the store. */
export async function insertReviewCandidate(
  services: Services,
  tenant: string,
  overrides: Partial<MemoryRecord> = {},
): Promise<MemoryRecord> {
  const now = new Date();
  const record: MemoryRecord = {
    _id: `mem_${uniqueId('r')}`,
    tenant,
    namespace: 'hr',
    subjects: ['employee-1'],
    kind: 'fact',
    attribute: 'salary',
    content: 'Salary is 52k.',
    contentHash: 'x'.repeat(64),
    validFrom: now,
    validTo: null,
    recordedAt: now,
    policy: {
      purpose: 'hr-administration',
      sensitivity: 'confidential',
      jurisdiction: 'PT',
      retentionClass: 'standard',
    },
    provenance: { eventIds: [], parentIds: [], derivationRule: 'test', modelVersion: null, promptVersion: null },
    trustTier: 1,
    confidence: 0.9,
    version: 1,
    status: 'candidate',
    writtenBy: 'agent-1',
    expiresAt: null,
    highImpact: true,
    statusReason: 'money-contracts-hr-health',
    updatedAt: now,
    ...overrides,
  };
  await services.memories.insert(record);
  return record;
}
