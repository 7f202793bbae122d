/** Honest certificates, chains and anchoring audit chains for the certificate tests, sealed as the store seals them. */
import { generateKeyPairSync } from 'node:crypto';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { GENESIS_HASH, sealEntry } from '../../../src/governance/audit/audit-chain.js';
import type { AuditEntry, AuditEntryInput } from '../../../src/governance/audit/audit-log.port.js';
import {
  certificateAnchor,
  chainCertificate,
  nextLink,
  type CertificateInput,
  type DeletionCertificate,
} from '../../../src/governance/certificates/certificate.js';
import { createSigner, type CertificateSigner } from '../../../src/governance/certificates/signing.js';

/** A fresh Ed25519 signer (and its private key, for tests that sign by hand). */
export function testSigner(): CertificateSigner & { privateKeyPem: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  return { ...createSigner(privateKey), privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** What an erasure of a subject with `n` located memories and derived views might state. */
export function sampleInput(tenant: string, i = 0, overrides: Partial<CertificateInput> = {}): CertificateInput {
  const located = 2 + (i % 3);
  const derived = 3 + (i % 4);
  const ids = Array.from({ length: located + derived }, (_, k) => `mem_${i}_${k}`);
  return {
    tenant,
    requestId: `req-${i}`,
    selectorHash: 'a'.repeat(63) + String(i % 10),
    requester: 'dpo-1',
    legalGround: 'gdpr-art17-1a',
    policy: { policyId: 'erasure-authority', policyVersion: 3, outcome: 'allow', ruleId: 'dpo-may-erase' },
    holds: [],
    status: 'complete',
    closure: { located, derived, collateral: i % 2, total: located + derived, ids },
    stores: [
      {
        store: 'mongodb',
        collection: 'memories',
        action: 'deleteOne+compact',
        deleted: located + derived,
        compacted: true,
      },
      {
        store: 'elasticsearch',
        index: `lethe-memories-${tenant}`,
        action: 'bulk delete+forcemerge(only_expunge_deletes)+flush',
        deleted: located + derived,
        deletedDocsAfter: 0,
      },
    ],
    probes: [
      { kind: 'id', target: 'api', checked: located + derived, found: 0 },
      { kind: 'text', target: 'elasticsearch', checked: 4, found: 0 },
      { kind: 'vector', target: 'elasticsearch', checked: 4, found: 0 },
    ],
    steps: [
      {
        step: 'locate',
        startedAt: '2025-03-01T10:00:00.000Z',
        finishedAt: '2025-03-01T10:00:01.000Z',
        counts: { located },
      },
      {
        step: 'purge',
        startedAt: '2025-03-01T10:00:01.000Z',
        finishedAt: '2025-03-01T10:00:09.500Z',
        counts: { deleted: located + derived },
      },
    ],
    assurance: [
      {
        place: 'elasticsearch:segments',
        level: 'L2',
        statement: 'expunged by force merge; _segments reports 0 deleted documents',
      },
      {
        place: 'postgresql:wal',
        level: 'L3',
        statement: 'old row versions may remain in WAL segments until they are recycled',
        lapses: { condition: 'WAL segment recycling after the next checkpoints' },
      },
      {
        place: 'backups',
        level: 'L3',
        statement: 'covered by backup expiry',
        lapses: { at: '2025-06-01T00:00:00.000Z' },
      },
    ],
    ...overrides,
  };
}

export interface ChainOptions {
  fromSeq?: number;
  prevHash?: string;
  /** issuedAt of the first certificate; each next one is `stepMs` later. */
  start?: Date;
  stepMs?: number;
}

/** An honest chain of `n` certificates for `tenant`. */
export function buildCertificateChain(
  tenant: string,
  n: number,
  signer: CertificateSigner,
  options: ChainOptions = {},
): DeletionCertificate[] {
  const start = options.start?.getTime() ?? Date.UTC(2025, 2, 1);
  const step = options.stepMs ?? 60_000;
  const chain: DeletionCertificate[] = [];
  let head: DeletionCertificate | null = null;
  for (let i = 0; i < n; i++) {
    const link = nextLink(head, new Date(start + i * step));
    if (!head) {
      link.seq = options.fromSeq ?? 1;
      if (options.prevHash) link.previousCertificateHash = options.prevHash;
    }
    head = chainCertificate(sampleInput(tenant, link.seq), link, signer);
    chain.push(head);
  }
  return chain;
}

/** An honest audit chain holding one anchor per certificate, with unrelated entries around them. */
export function anchoringAuditChain(
  certificates: DeletionCertificate[],
  tenant = certificates[0]?.tenant ?? 't-x',
): AuditEntry[] {
  const inputs: AuditEntryInput[] = [];
  certificates.forEach((c, i) => {
    inputs.push({
      tenant,
      actor: 'wf-erasure',
      action: 'erasure.step',
      target: c.requestId,
      outcome: 'ok',
      details: { step: i },
    });
    inputs.push(certificateAnchor(c));
  });
  inputs.push({ tenant, actor: 'system', action: 'memory.created', target: 'mem_after', outcome: 'ok', details: {} });
  return sealAudit(tenant, inputs);
}

/** Seals audit inputs into a chain from seq 1. */
export function sealAudit(tenant: string, inputs: AuditEntryInput[]): AuditEntry[] {
  let prev = GENESIS_HASH;
  return inputs.map((input, i) => {
    const entry = sealEntry({
      tenant,
      seq: i + 1,
      at: new Date(Date.UTC(2025, 2, 1, 0, 0, i)).toISOString(),
      actor: input.actor,
      action: input.action,
      target: input.target ?? null,
      outcome: input.outcome,
      details: input.details ?? {},
      idempotencyKey: input.idempotencyKey ?? `key-${i + 1}`,
      prevHash: prev,
    });
    prev = entry.hash;
    return entry;
  });
}

/** The entries sealed again as a new chain from seq 1: a history the operator rewrote. */
export function resealAudit(tenant: string, entries: readonly AuditEntry[]): AuditEntry[] {
  return sealAudit(
    tenant,
    entries.map(({ actor, action, target, outcome, details, idempotencyKey }) => ({
      tenant,
      actor,
      action,
      target,
      outcome,
      details,
      idempotencyKey,
    })),
  );
}

/** JSONL lines, as exported. */
export function jsonl(items: readonly unknown[]): string[] {
  return items.map((item) => canonicalJson(item));
}
