import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import {
  chainCertificate,
  nextLink,
  type CertificateInput,
  type DeletionCertificate,
} from '../../../src/governance/certificates/certificate.js';
import { verifyCertificatesJsonl } from '../../../src/governance/certificates/certificate-verify.js';
import { anchoringAuditChain, jsonl, sampleInput, testSigner } from './certificate-fixtures.js';

const signer = testSigner();
const publicKeys = signer.publicKeyPem;

/** What varies between erasures: sizes, holds, status, time between certificates. */
interface Shape {
  located: number;
  derived: number;
  held: number;
  gapMs: number;
}
const shape: fc.Arbitrary<Shape> = fc.record({
  located: fc.integer({ min: 0, max: 4 }),
  derived: fc.integer({ min: 0, max: 4 }),
  held: fc.integer({ min: 0, max: 2 }),
  gapMs: fc.integer({ min: 0, max: 86_400_000 }),
});
const tenantArb = fc.stringMatching(/^[a-z0-9][a-z0-9-]{1,20}$/);
const chainArb = (min: number) => fc.tuple(tenantArb, fc.array(shape, { minLength: min, maxLength: 10 }));

function inputFor(tenant: string, seq: number, s: Shape): CertificateInput {
  const base = sampleInput(tenant, seq);
  const ids = Array.from({ length: s.located + s.derived }, (_, k) => `rec-${seq}-${k}`);
  const heldIds = Array.from({ length: s.held }, (_, k) => `held-${seq}-${k}`);
  return {
    ...base,
    status: s.held > 0 ? 'partial' : 'complete',
    holds: s.held > 0 ? [{ holdId: `hold-${seq}`, exemptedCount: s.held, exemptedIds: heldIds }] : [],
    closure: { located: s.located, derived: s.derived, collateral: Math.min(1, s.derived), total: ids.length, ids },
  };
}

function buildChain(tenant: string, shapes: Shape[]): DeletionCertificate[] {
  const chain: DeletionCertificate[] = [];
  let head: DeletionCertificate | null = null;
  let at = Date.UTC(2025, 0, 1);
  for (const s of shapes) {
    at += s.gapMs;
    head = chainCertificate(inputFor(tenant, (head?.seq ?? 0) + 1, s), nextLink(head, new Date(at)), signer);
    chain.push(head);
  }
  return chain;
}

/** A different value of the same kind (so the change is a real edit, not a no-op). */
function changed(value: unknown): unknown {
  if (typeof value === 'string') return value.length === 0 ? 'x' : (value[0] === 'x' ? 'y' : 'x') + value.slice(1);
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'boolean') return !value;
  if (Array.isArray(value)) return value.length === 0 ? ['x'] : value.slice(1);
  if (value === null || value === undefined) return 'x';
  return { ...(value as object), injected: 1 };
}

/** Every leaf path of a certificate, plus a new top-level field. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.length === 0 ? [prefix] : value.flatMap((v, i) => paths(v, [...prefix, i]));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([k, v]) => paths(v, [...prefix, k]));
  }
  return [prefix];
}

function mutate(certificate: DeletionCertificate, pick: number): Record<string, unknown> {
  const copy = structuredClone(certificate) as unknown as Record<string, unknown>;
  const all = [...paths(copy), ['injectedField']];
  const path = all[pick % all.length]!;
  let parent: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  parent[last] = changed(parent[last]);
  return copy;
}

describe('certificate chain verification properties', () => {
  it('every honestly issued chain verifies, alone and with its anchoring audit export', () => {
    fc.assert(
      fc.property(chainArb(0), ([tenant, shapes]) => {
        const chain = buildChain(tenant, shapes);
        const audit = jsonl(anchoringAuditChain(chain, tenant));
        const result = verifyCertificatesJsonl({ certificates: jsonl(chain), audit }, { publicKeys, tenant });
        expect(result).toMatchObject({ ok: true, count: chain.length, headHash: chain.at(-1)?.hash ?? '0'.repeat(64) });
      }),
      { numRuns: 60 },
    );
  });

  it('any single changed field, anywhere in any certificate, is caught at exactly that line', () => {
    fc.assert(
      fc.property(chainArb(1), fc.nat(), fc.nat(), ([tenant, shapes], i, pick) => {
        const chain = buildChain(tenant, shapes);
        const index = i % chain.length;
        const lines = jsonl(chain);
        lines[index] = canonicalJson(mutate(chain[index]!, pick));
        expect(lines[index]).not.toBe(canonicalJson(chain[index]));
        const result = verifyCertificatesJsonl({ certificates: lines }, { publicKeys });
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.firstBad.line).toBe(index + 1);
      }),
      { numRuns: 200 },
    );
  });

  it('any single removed certificate is caught at its successor, or with the audit export and period end when it was last', () => {
    fc.assert(
      fc.property(chainArb(1), fc.nat(), ([tenant, shapes], i) => {
        const chain = buildChain(tenant, shapes);
        const audit = jsonl(anchoringAuditChain(chain, tenant));
        const index = i % chain.length;
        const removed = jsonl(chain.filter((_, k) => k !== index));
        const to = new Date(chain.at(-1)!.issuedAt);
        const result = verifyCertificatesJsonl({ certificates: removed, audit }, { publicKeys, to });
        expect(result.ok).toBe(false);
        if (!result.ok) {
          expect(result.firstBad.line).toBe(index + 1);
          if (index === chain.length - 1) expect(result.firstBad.certificateId).toBe(chain[index]!.certificateId);
        }
        if (index < chain.length - 1)
          expect(verifyCertificatesJsonl({ certificates: removed }, { publicKeys }).ok).toBe(false);
      }),
      { numRuns: 100 },
    );
  });

  it('any swap of two certificates is caught at the first of them', () => {
    fc.assert(
      fc.property(chainArb(2), fc.nat(), fc.nat(), ([tenant, shapes], a, b) => {
        const chain = buildChain(tenant, shapes);
        const i = a % chain.length;
        let j = b % chain.length;
        if (i === j) j = (j + 1) % chain.length;
        const lines = jsonl(chain);
        [lines[i], lines[j]] = [lines[j]!, lines[i]!];
        const result = verifyCertificatesJsonl({ certificates: lines }, { publicKeys });
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.firstBad.line).toBe(Math.min(i, j) + 1);
      }),
      { numRuns: 100 },
    );
  });

  it('a chain checked with any other key is rejected at its first certificate', () => {
    const other = testSigner();
    fc.assert(
      fc.property(chainArb(1), ([tenant, shapes]) => {
        const result = verifyCertificatesJsonl(
          { certificates: jsonl(buildChain(tenant, shapes)) },
          { publicKeys: other.publicKeyPem },
        );
        expect(result).toMatchObject({
          ok: false,
          firstBad: { line: 1, reason: expect.stringMatching(/^unknown key:/) },
        });
      }),
      { numRuns: 30 },
    );
  });
});
