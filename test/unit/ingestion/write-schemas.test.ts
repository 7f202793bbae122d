import { describe, expect, it } from 'vitest';
import { WriteBatchSchema } from '../../../src/ingestion/write-schemas.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { sampleMemory } from '../../support/samples.js';

const refusal = (provenance: Record<string, unknown>) => {
  try {
    parseOrThrow(WriteBatchSchema, {
      memories: [sampleMemory(), sampleMemory({ provenance: { derivationRule: 'extract', ...provenance } })],
    });
  } catch (error) {
    return { type: (error as { type: string }).type, message: (error as Error).message };
  }
  return null;
};

describe('the ids a memory cites', () => {
  it('refuses an event named twice, naming the repeat', () => {
    expect(refusal({ eventIds: ['evt_a', 'evt_b', 'evt_c', 'evt_b'] })).toEqual({
      type: 'ValidationError',
      message: 'memories.1.provenance.eventIds.3: named twice',
    });
  });

  it('refuses a parent named twice, naming the repeat', () => {
    expect(refusal({ eventIds: ['evt_a'], parentIds: ['mem_p', 'mem_p'] })).toEqual({
      type: 'ValidationError',
      message: 'memories.1.provenance.parentIds.1: named twice',
    });
  });

  it('refuses one event cited 256 times at its first repeat', () => {
    expect(refusal({ eventIds: Array.from({ length: 256 }, () => 'evt_a') })?.message).toBe(
      'memories.1.provenance.eventIds.1: named twice',
    );
  });

  it('admits distinct ids, and the same id as both an event and a parent (they are different records)', () => {
    expect(refusal({ eventIds: ['evt_a', 'evt_b'], parentIds: ['mem_a', 'mem_b'] })).toBeNull();
    expect(refusal({ eventIds: ['x_1'], parentIds: ['x_1'] })).toBeNull();
  });
});
