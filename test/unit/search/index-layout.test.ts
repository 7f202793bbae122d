import { describe, expect, it } from 'vitest';
import {
  memoryIndexMapping,
  memoryIndexSettings,
  tenantIndexNames,
  toIndexDocument,
} from '../../../src/substrate/search/index-layout.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';
import { rankWindow, numCandidates } from '../../../src/substrate/search/elasticsearch-search-index.js';

const record: MemoryRecord = {
  _id: 'm-1',
  tenant: 'acme',
  namespace: 'crm',
  subjects: ['s-1'],
  kind: 'fact',
  attribute: null,
  content: 'text',
  contentHash: 'h',
  validFrom: new Date('2025-01-01T00:00:00Z'),
  validTo: null,
  recordedAt: new Date('2025-01-02T00:00:00Z'),
  policy: { purpose: 'support', sensitivity: 'internal', jurisdiction: 'EU', retentionClass: 'standard' },
  provenance: { eventIds: [], parentIds: [], derivationRule: 'direct', modelVersion: null, promptVersion: null },
  trustTier: 2,
  confidence: 0.9,
  version: 1,
  status: 'active',
  writtenBy: 'agent-1',
  expiresAt: null,
  highImpact: false,
  statusReason: null,
  updatedAt: new Date('2025-01-02T00:00:00Z'),
};

describe('tenant index layout', () => {
  it('names the alias and its versioned index after the prefix and tenant', () => {
    expect(tenantIndexNames('lethe', 'acme-1')).toEqual({
      alias: 'lethe-mem-acme-1',
      index: 'lethe-mem-acme-1-v1',
      next: 'lethe-mem-acme-1.next',
    });
  });

  it('refuses tenant ids that cannot be part of an index name', () => {
    for (const bad of ['', 'A', 'Acme', '-acme', 'a', 'acme_1', 'a/b', '*', 'x'.repeat(64)]) {
      expect(() => tenantIndexNames('lethe', bad)).toThrow(/tenant/);
    }
  });

  it('maps strictly, with a cosine HNSW vector of the configured size', () => {
    const mapping = memoryIndexMapping(256);
    expect(mapping.dynamic).toBe('strict');
    expect(mapping.properties?.embedding).toMatchObject({
      type: 'dense_vector',
      dims: 256,
      similarity: 'cosine',
      index: true,
    });
    expect(mapping.properties?.content).toEqual({ type: 'text', analyzer: 'standard' });
  });

  it('lets callers add index settings over the defaults', () => {
    const settings = memoryIndexSettings({ 'index.soft_deletes.retention_lease.sync_interval': '1s' });
    expect(settings).toMatchObject({
      'index.merge.policy.expunge_deletes_allowed': 0,
      'index.soft_deletes.retention_lease.sync_interval': '1s',
    });
  });

  it('indexes governance fields and leaves out an open validTo and a missing embedding', () => {
    const doc = toIndexDocument(record, null);
    expect(doc).toMatchObject({
      memoryId: 'm-1',
      principal: 'agent-1',
      purpose: 'support',
      validFrom: '2025-01-01T00:00:00.000Z',
    });
    expect('validTo' in doc).toBe(false);
    expect('embedding' in doc).toBe(false);
    const closed = toIndexDocument({ ...record, validTo: new Date('2025-06-01T00:00:00Z') }, [1, 0]);
    expect(closed.validTo).toBe('2025-06-01T00:00:00.000Z');
    expect(closed.embedding).toEqual([1, 0]);
  });

  it('fetches a rank window wider than k and enough HNSW candidates for it', () => {
    expect(rankWindow(1)).toBe(20);
    expect(rankWindow(50)).toBe(100);
    expect(numCandidates(rankWindow(1))).toBe(100);
    expect(numCandidates(rankWindow(1000))).toBe(10_000);
  });
});
