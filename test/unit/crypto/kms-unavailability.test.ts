import { describe, expect, it } from 'vitest';
import { kmsUnavailability } from '../../../src/substrate/crypto/aws-kms-keks.js';
import { KekUnavailable } from '../../../src/substrate/crypto/key-encryption-keys.port.js';

const sdkError = (name: string, status?: number) =>
  Object.assign(new Error('refused'), { name, ...(status ? { $metadata: { httpStatusCode: status } } : {}) });

describe('which KMS failures are worth waiting for', () => {
  it.each([
    ['a refused connection', Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }), 'ECONNREFUSED'],
    ['a reset connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'ECONNRESET'],
    [
      'a request past its timeout',
      Object.assign(new Error('t'), { name: 'TimeoutError', code: 'ETIMEDOUT' }),
      'ETIMEDOUT',
    ],
    ['throttling', sdkError('ThrottlingException', 400), 'ThrottlingException'],
    ["the KMS's own failure", sdkError('KMSInternalException', 500), 'KMSInternalException'],
    ['an unnamed 503', sdkError('Unknown', 503), 'HTTP 503'],
  ])('%s is KekUnavailable (503, retried), naming its cause', (_what, error, reason) => {
    const unavailable = kmsUnavailability(error);
    expect(unavailable).toBeInstanceOf(KekUnavailable);
    expect(unavailable!.reason).toBe(reason);
    expect(unavailable!.status).toBe(503);
    expect(unavailable!.field).toBe('kms');
  });

  it.each([
    ['a disabled key', sdkError('DisabledException', 400)],
    ['a wrong encryption context', sdkError('InvalidCiphertextException', 400)],
    ['denied access', sdkError('AccessDeniedException', 400)],
    ['a plain bug', new TypeError('x is undefined')],
  ])('%s is not: it is a real refusal, passed on as it is', (_what, error) => {
    expect(kmsUnavailability(error)).toBeNull();
  });
});
