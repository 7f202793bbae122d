/**
 * Writes for the ingest comparison: the API batch a client sends, and the documents the governed path ends
 * up storing for it, built directly (what a raw `insertMany` + `_bulk` writes).
 */
import type { TenantMacs } from '../../src/substrate/fingerprint.js';
import { randomUUID } from 'node:crypto';
import { eventRecordOf } from '../../src/substrate/events/event-store.js';
import { sha256Hex } from '../../src/shared/sha256.js';
import type { EventInput, MemoryInput } from '../../src/ingestion/write-schemas.js';
import type { EventRecord, MemoryRecord } from '../../src/substrate/model/records.js';
import { rng, sentenceMaker } from './substrate-measure.js';

/** Low-impact namespaces under the memory-impact policy, so that admitted memories are active and searchable. */
export const NAMESPACES = ['crm', 'support', 'sales', 'ops', 'product', 'marketing', 'success', 'docs'];

/** The body of `POST /v1/tenants/{tenant}/batches`. */
export interface IngestBatch {
  events: EventInput[];
  memories: MemoryInput[];
}

/** `size` events and `size` memories, memory i derived from event i of the same batch. */
export function ingestBatches(batches: number, size: number, seed: number): IngestBatch[] {
  const sentence = sentenceMaker(rng(seed));
  return Array.from({ length: batches }, (_, b) => {
    const events: EventInput[] = [];
    const memories: MemoryInput[] = [];
    for (let i = 0; i < size; i++) {
      const n = b * size + i;
      const namespace = NAMESPACES[n % NAMESPACES.length]!;
      const subjects = [`subject-${n % 97}`];
      const occurredAt = new Date(Date.UTC(2025, 0, 1) + n * 60_000).toISOString();
      events.push({
        source: 'bench',
        externalId: `ext-${randomUUID()}`,
        namespace,
        subjects,
        content: sentence(30),
        occurredAt,
        sensitivity: 'internal',
        trustTier: 1,
        scope: 'principal',
      });
      memories.push({
        namespace,
        subjects,
        kind: 'fact',
        content: sentence(20),
        validFrom: occurredAt,
        purpose: 'customer-support',
        sensitivity: 'internal',
        jurisdiction: 'PT',
        scope: 'tenant',
        trustTier: 1,
        confidence: 0.8,
        provenance: { eventIds: [`#${i}`], parentIds: [], derivationRule: 'bench-extract' },
      });
    }
    return { events, memories };
  });
}

/** The event and memory documents the governed path stores for a batch (same fields, same ids scheme). */
export function storedDocuments(
  macs: TenantMacs,
  tenant: string,
  batch: IngestBatch,
): { events: EventRecord[]; memories: MemoryRecord[] } {
  const now = new Date();
  const events = batch.events.map((e): EventRecord =>
    eventRecordOf(
      macs,
      { ...e, tenant, occurredAt: new Date(e.occurredAt), recordedBy: 'bench-raw', scope: 'principal:bench-raw' },
      now,
      null,
    ),
  );
  const memories = batch.memories.map((m, i): MemoryRecord => ({
    _id: `mem_${randomUUID()}`,
    tenant,
    namespace: m.namespace,
    subjects: m.subjects,
    kind: m.kind,
    attribute: m.attribute ?? null,
    content: m.content,
    contentHash: sha256Hex(m.content),
    validFrom: new Date(m.validFrom),
    validTo: null,
    recordedAt: now,
    policy: {
      purpose: m.purpose,
      sensitivity: m.sensitivity,
      jurisdiction: m.jurisdiction,
      retentionClass: 'standard',
    },
    provenance: {
      eventIds: [events[i]!._id],
      parentIds: [],
      derivationRule: m.provenance.derivationRule,
      modelVersion: null,
      promptVersion: null,
    },
    trustTier: m.trustTier,
    confidence: m.confidence,
    version: 1,
    status: 'active',
    writtenBy: 'bench-raw',
    expiresAt: null,
    highImpact: false,
    statusReason: null,
    updatedAt: now,
  }));
  return { events, memories };
}
