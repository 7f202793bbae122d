/** Honest chains for the audit tests, built with the same sealing as the real log. */
import { GENESIS_HASH, sealEntry } from '../../../src/governance/audit/audit-chain.js';
import type { AuditEntry, AuditValue } from '../../../src/governance/audit/audit-log.port.js';

export interface EntrySeed {
  actor: string;
  action: string;
  target: string | null;
  outcome: AuditEntry['outcome'];
  details: Record<string, AuditValue>;
}

/** A sealed chain for `tenant` from seq `fromSeq`, continuing from `prevHash`. */
export function buildChain(tenant: string, seeds: EntrySeed[], fromSeq = 1, prevHash = GENESIS_HASH): AuditEntry[] {
  const chain: AuditEntry[] = [];
  let prev = prevHash;
  seeds.forEach((seed, i) => {
    const entry = sealEntry({
      tenant,
      seq: fromSeq + i,
      at: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
      ...seed,
      idempotencyKey: `key-${fromSeq + i}`,
      prevHash: prev,
    });
    chain.push(entry);
    prev = entry.hash;
  });
  return chain;
}

/** `n` plain seeds. */
export function seeds(n: number): EntrySeed[] {
  return Array.from({ length: n }, (_, i) => ({
    actor: 'system',
    action: i % 2 === 0 ? 'memory.created' : 'erasure.completed',
    target: `mem_${i}`,
    outcome: 'ok' as const,
    details: { count: i, stage: `s${i}`, final: i % 3 === 0, ref: null },
  }));
}
