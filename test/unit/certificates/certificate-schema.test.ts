import { describe, expect, it } from 'vitest';
import { ErrorType } from '../../../src/shared/errors.js';
import {
  describeInvalidCertificate,
  parseCertificateInput,
} from '../../../src/governance/certificates/certificate-schema.js';
import {
  chainCertificate,
  defaultCertificateId,
  nextLink,
  type CertificateInput,
} from '../../../src/governance/certificates/certificate.js';
import { sampleInput, testSigner } from './certificate-fixtures.js';

function refusal(input: unknown): { type: string; field: string | undefined; message: string } {
  try {
    parseCertificateInput(input);
  } catch (error) {
    const e = error as { type: string; field?: string; message: string };
    return { type: e.type, field: e.field, message: e.message };
  }
  throw new Error('expected a refusal');
}

describe('what a certificate may hold', () => {
  it('an erasure stated with ids, keyed hashes and counts is accepted as given', () => {
    const input = sampleInput('t-schema');
    expect(parseCertificateInput(input)).toEqual(input);
  });

  it('optional fields given as undefined are dropped, so the body still has a canonical form', () => {
    const input = sampleInput('t-schema', 0, { certificateId: undefined });
    expect(Object.keys(parseCertificateInput(input))).not.toContain('certificateId');
  });

  it('an exposure statement holds counts and times that agree with each other', () => {
    const base = sampleInput('t-schema');
    const t1 = '2026-11-01T10:00:00.000Z';
    const t2 = '2026-11-02T10:00:00.000Z';
    const exposed = {
      retrievals: 2,
      prompts: 1,
      firstRetrievedAt: t1,
      lastRetrievedAt: t2,
      firstExposedAt: t2,
      lastExposedAt: t2,
    };
    expect(parseCertificateInput({ ...base, exposure: exposed })).toMatchObject({ exposure: exposed });
    expect(parseCertificateInput({ ...base, exposure: { retrievals: 0, prompts: 0 } })).toMatchObject({
      exposure: { retrievals: 0, prompts: 0 },
    });
    expect(
      refusal({ ...base, exposure: { retrievals: 0, prompts: 1, firstExposedAt: t1, lastExposedAt: t1 } }),
    ).toMatchObject({
      field: 'exposure.prompts',
    });
    expect(refusal({ ...base, exposure: { retrievals: 2, prompts: 0 } })).toMatchObject({
      field: 'exposure.firstRetrievedAt',
    });
    expect(refusal({ ...base, exposure: { ...exposed, lastRetrievedAt: '2026-10-01T00:00:00.000Z' } })).toMatchObject({
      field: 'exposure.lastRetrievedAt',
    });
    expect(refusal({ ...base, exposure: { ...exposed, retrievalIds: ['rtv_1'] } }).type).toBe(ErrorType.Validation);
  });

  it('an e-mail address or free text is refused wherever an opaque id belongs, naming the field', () => {
    const base = sampleInput('t-schema');
    expect(
      refusal({ ...base, closure: { ...base.closure, ids: ['alice@example.com', ...base.closure.ids.slice(1)] } }),
    ).toMatchObject({
      type: ErrorType.Validation,
      field: 'closure.ids.0',
    });
    expect(refusal({ ...base, requestId: 'erase Alice Smith' }).field).toBe('requestId');
    expect(refusal({ ...base, holds: [{ holdId: 'h@x', exemptedCount: 0, exemptedIds: [] }] }).field).toBe(
      'holds.0.holdId',
    );
  });

  it('a statement may not carry an e-mail address, and no message echoes the refused value', () => {
    const base = sampleInput('t-schema');
    const assurance = [{ place: 'backups', level: 'L1' as const, statement: 'probed for bob@example.com' }];
    const r = refusal({ ...base, assurance });
    expect(r.field).toBe('assurance.0.statement');
    expect(r.message).not.toContain('bob');
  });

  it('a field the format does not define (e.g. the subject in the clear) is refused', () => {
    const r = refusal({ ...sampleInput('t-schema'), subjectId: 'alice' });
    expect(r).toMatchObject({ type: ErrorType.Validation, field: 'subjectId' });
    expect(r.message).toContain('unknown field');
  });

  it('the selector appears only as a keyed hash', () => {
    expect(refusal({ ...sampleInput('t-schema'), selectorHash: 'subject:alice' }).field).toBe('selectorHash');
    expect(
      parseCertificateInput({ ...sampleInput('t-schema'), selectorHash: `hmac-sha256:${'0f'.repeat(32)}` }),
    ).toBeTruthy();
  });

  it('an L3 place must say when or on what condition it lapses', () => {
    const base = sampleInput('t-schema');
    const assurance = [{ place: 'postgresql:wal', level: 'L3' as const, statement: 'may linger in WAL' }];
    expect(refusal({ ...base, assurance }).field).toBe('assurance.0.lapses');
  });

  it('counts must add up: total = located + derived = number of ids, exemptions = their ids', () => {
    const base = sampleInput('t-schema');
    expect(refusal({ ...base, closure: { ...base.closure, total: base.closure.total + 1 } }).field).toBe(
      'closure.total',
    );
    expect(refusal({ ...base, closure: { ...base.closure, ids: base.closure.ids.slice(1) } }).field).toBe(
      'closure.ids',
    );
    expect(
      refusal({ ...base, closure: { ...base.closure, ids: [...base.closure.ids.slice(1), base.closure.ids[1]!] } })
        .field,
    ).toBe('closure.ids');
    const holds = [{ holdId: 'hold-1', exemptedCount: 2, exemptedIds: ['mem_x'] }];
    expect(refusal({ ...base, status: 'partial', holds }).field).toBe('holds.0.exemptedIds');
  });

  it('a complete certificate exempts nothing, and none of its probes found anything', () => {
    const base = sampleInput('t-schema');
    const holds = [{ holdId: 'hold-1', exemptedCount: 1, exemptedIds: ['mem_held'] }];
    expect(refusal({ ...base, holds }).field).toBe('holds.0.exemptedCount');
    expect(parseCertificateInput({ ...base, holds, status: 'partial' }).status).toBe('partial');
    const probes = [{ kind: 'text' as const, target: 'elasticsearch' as const, checked: 3, found: 1 }];
    expect(refusal({ ...base, probes }).field).toBe('probes.0.found');
  });

  it("the governed search's probe says how much it could serve and how many sentences it searched, no more than it checked", () => {
    const base = sampleInput('t-schema');
    const api = { kind: 'text', target: 'api', checked: 40, sentences: 40, found: 0, outside: 0 } as const;
    const withApi = (probe: object) => ({ ...base, probes: [...base.probes, probe] });
    expect(parseCertificateInput(withApi({ ...api, served: 600, searched: 32 })).probes).toContainEqual({
      ...api,
      served: 600,
      searched: 32,
    });
    // Certificates issued before the listing carry neither field.
    expect(parseCertificateInput(withApi(api)).probes).toContainEqual(api);
    expect(refusal(withApi({ ...api, served: 600, searched: 41 })).field).toBe(`probes.${base.probes.length}.searched`);
    expect(refusal(withApi({ ...api, target: 'elasticsearch', served: 600 })).field).toBe(
      `probes.${base.probes.length}.served`,
    );
    expect(refusal(withApi({ ...api, served: -1 })).field).toBe(`probes.${base.probes.length}.served`);
  });

  it('timestamps are UTC instants in toISOString form', () => {
    const base = sampleInput('t-schema');
    const steps = [
      { step: 'locate', startedAt: '2025-03-01T10:00:00+01:00', finishedAt: '2025-03-01T10:00:01.000Z', counts: {} },
    ];
    expect(refusal({ ...base, steps }).field).toBe('steps.0.startedAt');
  });

  it('a sealed certificate is well-formed, and its default id is derived from tenant, request and status', () => {
    const input: CertificateInput = sampleInput('t-schema', 4);
    const certificate = chainCertificate(input, nextLink(null, new Date('2025-03-01T00:00:00Z')), testSigner());
    expect(describeInvalidCertificate(certificate)).toBeNull();
    expect(certificate.certificateId).toBe(defaultCertificateId('t-schema', 'req-4', 'complete'));
    expect(defaultCertificateId('t-schema', 'req-4', 'partial')).not.toBe(certificate.certificateId);
    expect(certificate).toMatchObject({
      seq: 1,
      previousCertificateHash: '0'.repeat(64),
      issuedAt: '2025-03-01T00:00:00.000Z',
    });
  });

  it('issuedAt never goes backwards along the chain, even when the clock does', () => {
    const head = { seq: 4, issuedAt: '2025-03-01T00:00:10.000Z', hash: 'f'.repeat(64) };
    expect(nextLink(head, new Date('2025-03-01T00:00:05.000Z'))).toEqual({
      seq: 5,
      previousCertificateHash: 'f'.repeat(64),
      issuedAt: '2025-03-01T00:00:10.000Z',
    });
  });
});
