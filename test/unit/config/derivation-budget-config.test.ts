import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { envRefusal, minimalEnv } from '../../support/config-refusal.js';

const base = { ...minimalEnv, LETHE_ENV: 'test' };
const refusal = envRefusal;

describe('derivation audit budgets', () => {
  it('defaults to 128 KiB per audit, 8 MiB per batch, a 2 s deadline on two verifier threads', () => {
    expect(parseConfig(base).derivation).toMatchObject({
      verifier: { kind: 'deterministic', deadlineMs: 2000, threads: 2 },
      maxAuditBytes: 128 * 1024,
      maxBatchBytes: 8 * 1024 * 1024,
    });
  });

  it('refuses a malformed or inconsistent budget at boot, naming the variable', () => {
    expect(refusal({ LETHE_VERIFIER_DEADLINE_MS: 'soon' }).variable).toBe('LETHE_VERIFIER_DEADLINE_MS');
    expect(refusal({ LETHE_VERIFIER_THREADS: '0' }).variable).toBe('LETHE_VERIFIER_THREADS');
    expect(refusal({ LETHE_DERIVATION_AUDIT_MAX_BYTES: '12' }).variable).toBe('LETHE_DERIVATION_AUDIT_MAX_BYTES');
    expect(
      refusal({ LETHE_DERIVATION_AUDIT_MAX_BYTES: String(4 << 20), LETHE_DERIVATION_BATCH_MAX_BYTES: String(1 << 20) })
        .message,
    ).toBe('LETHE_DERIVATION_BATCH_MAX_BYTES: must be at least LETHE_DERIVATION_AUDIT_MAX_BYTES');
  });
});
