import { describe, expect, it } from 'vitest';
import { buildFiling, formFieldOf, type FilingFields } from '../../../console/src/dpo/selector-form.js';
import { ErasureFilingSchema } from '../../../src/governance/erasure/erasure-request.js';

const base: FilingFields = {
  kind: 'subjectId',
  subjectId: '',
  memoryIds: '',
  from: '',
  to: '',
  contentFingerprint: '',
  legalGround: 'art17-1a',
};

describe("the DPO console's selector builder", () => {
  it('builds, for every kind of selector, a filing the API schema accepts', () => {
    const filings = [
      { ...base, subjectId: ' customer-ana ' },
      { ...base, kind: 'memoryIds' as const, memoryIds: 'mem_1, mem_2\nmem_3' },
      { ...base, kind: 'validTime' as const, from: '2026-01-01T00:00', to: '2026-02-01T12:30' },
      { ...base, kind: 'transactionTime' as const, from: '2026-01-01T00:00', to: '2026-01-02T00:00' },
      { ...base, kind: 'contentFingerprint' as const, contentFingerprint: 'AB'.repeat(32) },
    ].map(buildFiling);
    for (const filing of filings) {
      expect('body' in filing).toBe(true);
      if ('body' in filing) expect(ErasureFilingSchema.safeParse(filing.body).success).toBe(true);
    }
    expect(filings[1]).toEqual({
      body: { selector: { memoryIds: ['mem_1', 'mem_2', 'mem_3'] }, legalGround: 'art17-1a' },
    });
    expect(filings[2]).toMatchObject({
      body: { selector: { validTime: { from: '2026-01-01T00:00:00Z', to: '2026-02-01T12:30:00Z' } } },
    });
  });

  it('names the field of each mistake', () => {
    expect(buildFiling({ ...base, legalGround: '' })).toEqual({
      errors: { subjectId: 'Subject id: required', legalGround: 'Legal ground: choose the ground of the request' },
    });
    expect(buildFiling({ ...base, kind: 'memoryIds', memoryIds: ' , ' })).toEqual({
      errors: { memoryIds: 'Memory ids: name at least one memory id' },
    });
    expect(buildFiling({ ...base, kind: 'validTime', from: '2026-02-01T00:00', to: '2026-01-01T00:00' })).toEqual({
      errors: { to: 'To: must be after From' },
    });
    expect(buildFiling({ ...base, kind: 'transactionTime', from: 'yesterday', to: '' })).toEqual({
      errors: { from: 'From: a date and time is required', to: 'To: a date and time is required' },
    });
    expect(buildFiling({ ...base, kind: 'contentFingerprint', contentFingerprint: 'abc' })).toEqual({
      errors: { contentFingerprint: 'Content fingerprint: a SHA-256 hex digest (64 hexadecimal digits)' },
    });
  });

  it("points an API error's field at the form field it concerns", () => {
    expect(formFieldOf('selector.subjectId', 'subjectId')).toBe('subjectId');
    expect(formFieldOf('selector.validTime.to', 'validTime')).toBe('to');
    expect(formFieldOf('legalGround', 'memoryIds')).toBe('legalGround');
    expect(formFieldOf('requestKey', 'subjectId')).toBeNull();
    expect(formFieldOf(null, 'subjectId')).toBeNull();
  });
});
