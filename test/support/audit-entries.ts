/**
 * Audit entries for tests of the log itself, and RFC 6962's tree head written out naively (every root recomputed
 * from all the leaves), which the stored tree must agree with.
 */
import { emptyTreeHash, nodeHash, type Hash } from '../../src/governance/audit/log-tree/merkle-tree.js';

/** `n` entries of a tenant, targets `mem_<from>`… */
export const auditEntries = (tenant: string, n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({
    tenant,
    actor: 'system',
    action: 'memory.created',
    target: `mem_${from + i}`,
    outcome: 'ok' as const,
    details: { n: from + i },
  }));

/** MTH(D[n]) straight from RFC 6962 §2.1, over all the leaves. */
export function naiveRoot(leaves: readonly Hash[]): Hash {
  if (leaves.length === 0) return emptyTreeHash();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(naiveRoot(leaves.slice(0, k)), naiveRoot(leaves.slice(k)));
}
