/** What both audit benches append: one erasure step's entry, the same shape every time, and a timer. */
import type { AuditEntryInput } from '../../src/governance/audit/audit-log.port.js';

export const benchAuditInput = (tenant: string, i: number): AuditEntryInput => ({
  tenant,
  actor: 'wf-erasure-bench',
  action: 'memory.deleted',
  target: `mem_${i}`,
  outcome: 'ok',
  details: { step: i, purged: 3, request: 'req_0001' },
});

/** Wall time of `fn`, in ms. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}
